export * from './scripted.model';
export * from './openai.model';
export * from './user-pattern';
