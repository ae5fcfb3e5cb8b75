export * from './scripted.model';
export * from './openai.model';
