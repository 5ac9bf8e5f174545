export { createEngine, DEFAULT_TOMBSTONE_MS, type Engine, type EngineOptions } from './engine';
export { jsonConsoleLogger, type EngineLogger } from './logger';
export { EVENT_NAMES } from './events';
