export * from './types';
export type { AnyTimerHandler, JsonHandlers, TimerHandlerMap } from './handler-types';
export * from './errors';
export { SUNDIAL_HTTP_STATUS } from './http-status';
export { type InactiveOperation, refusals } from './refusals';
export {
  type EndedStatus,
  isEndedStatus,
  keyEndedFix,
  keyNotFoundFix,
  type KeyFixWays,
  keyScope,
  NO_HISTORY,
} from './browser/key-fix';
export { NOW_HEADER } from './browser/server-clock';
export { asTheBatchLeftThem } from './batch-answers';
export { liveKeyInBatch, normalizeBatch } from './batch-refusals';
export { OptionReader } from './option-reader';
export { normalizeAt } from './time-fields';
export * from './failure';
export * from './run-timeout';
export * from './request-id';
export { noteRequestCall, watchReplay } from './replays';
export { stableJson } from './stable-json';
export * from './duration';
export * from './validation';
export { validateHandler, validateIdArgument, validateKey, validateScope } from './names';
export { type ListQuery, toListQuery } from './list-query';
export { checkDueBefore, compareDue, type DuePosition } from './due-order';
export {
  decodeDueCursor,
  decodeKeyCursor,
  encodeDueCursor,
  encodeKeyCursor,
  type ListScope,
} from './list-cursor';
export { DEFAULT_RETRY_DELAY_MS, retryDelay } from './run-policies';
export * from './cron';
export * from './schedule';
export * from './slot-policy';
export { fnv1a32 } from './fnv1a32';
export * from './clock';
export * from './virtual-clock';
export * from './engine';
export * from './logger';
export * from './owned-rows';
export * from './owner-mark';
export * from './ledger';
export * from './next-times';
