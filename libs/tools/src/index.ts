export * from './tool';
export * from './registry';
export * from './builtin/demo.tools';
