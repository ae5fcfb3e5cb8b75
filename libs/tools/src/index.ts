export * from './tool';
export * from './registry';
export * from './remote';
export * from './builtin/demo.tools';
export * from './builtin/http.tools';
export * from './builtin/memory.tools';
export * from './builtin/effect-demo.tools';
export * from './run-tool';
