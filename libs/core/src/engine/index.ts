export { createEngine, DEFAULT_TOMBSTONE_MS, type Engine, type EngineOptions } from './engine';
export { EVENT_NAMES } from './events';
