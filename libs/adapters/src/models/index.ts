export * from './scripted.model';
