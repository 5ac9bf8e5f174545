import type { ExecutionContext } from '@nestjs/common';
import { ApiTokenGuard } from './api-token';

/** The token check on the route matched (the edge's check goes by the URL, which a client shapes). */
describe('ApiTokenGuard', () => {
  const guard = new ApiTokenGuard('s3cret');
  const context = (path: string, authorization?: string) =>
    ({
      switchToHttp: () => ({ getRequest: () => ({ route: { path }, headers: { authorization } }) }),
    }) as unknown as ExecutionContext;

  it('refuses a /v1 route without the token, or with another, whatever URL reached it', () => {
    expect(() => guard.canActivate(context('/v1/timers/:key'))).toThrow(
      expect.objectContaining({ reason: 'unauthorized', message: 'missing Authorization header' }),
    );
    expect(() => guard.canActivate(context('/v1/registry', 'Bearer nope'))).toThrow(
      expect.objectContaining({ reason: 'unauthorized' }),
    );
  });

  it('lets the token through, and leaves /health and /metrics alone', () => {
    expect(guard.canActivate(context('/v1/timers', 'Bearer s3cret'))).toBe(true);
    expect(guard.canActivate(context('/health/ready'))).toBe(true);
    expect(new ApiTokenGuard(undefined).canActivate(context('/v1/timers'))).toBe(true);
  });
});
