export { createEngine, DEFAULT_TOMBSTONE_MS, type EngineOptions } from './engine';
export { checkListener, EVENT_NAMES } from './events';
export type { Engine } from './request-memory';
