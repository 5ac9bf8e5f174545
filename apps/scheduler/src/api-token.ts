import { SundialError } from '@sundial/core';
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * With SUNDIAL_API_TOKEN set, a `/v1` call needs `Authorization: Bearer <token>`. Returns what
 * refuses a call's Authorization header, or null when it may go on.
 */
export function apiTokenCheck(
  token: string | undefined,
): (authorization: string | undefined) => SundialError | null {
  if (token === undefined) return () => null;
  const expected = digest(token);
  return (authorization = '') => {
    const match = /^Bearer\s+(.+)$/i.exec(authorization);
    // Comparing digests keeps the comparison constant-time whatever the length sent.
    if (match && timingSafeEqual(digest(match[1].trim()), expected)) return null;
    return new SundialError({
      reason: 'unauthorized',
      field: 'authorization',
      message: match ? 'the API token sent is not the configured one' : 'missing Authorization header',
      fix: 'Send the header `Authorization: Bearer <SUNDIAL_API_TOKEN>`.',
    });
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
