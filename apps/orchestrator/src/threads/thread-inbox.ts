// The inbox path now lives in the engine; this name stays for the modules that still import it here.
export { ThreadInbox } from '@ratchet/engine';
