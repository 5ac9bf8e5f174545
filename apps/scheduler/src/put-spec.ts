import { refusals, type TimerSpec } from '@sundial/core';
import { BODY_EXAMPLES, examplesText } from './request-body';

/** PUT names the key in the path and always replaces; a body that says otherwise is refused. */
export function putSpec(key: string, body: unknown): TimerSpec {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw refusals.invalid(
      'body',
      'the body must be a JSON object (a TimerSpec)',
      `Send e.g. ${examplesText(BODY_EXAMPLES.putSpec)}.`,
    );
  }
  const spec = body as Partial<TimerSpec>;
  if (spec.key !== undefined && spec.key !== key) {
    throw refusals.invalid(
      'key',
      `body key "${spec.key}" differs from the path key "${key}"`,
      'Omit key from the body.',
    );
  }
  if (spec.ifExists !== undefined && spec.ifExists !== 'replace') {
    throw refusals.invalid(
      'ifExists',
      `PUT always replaces; got ifExists "${spec.ifExists}"`,
      'Use POST /v1/timers for ifExists error or keep.',
    );
  }
  return { ...spec, key } as TimerSpec;
}
