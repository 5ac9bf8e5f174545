import { type ArgumentsHost, Catch, type ExceptionFilter, Inject, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { SundialError, SUNDIAL_HTTP_STATUS } from '@sundial/core';

/**
 * The response, when the filter is made without the app's HTTP adapter: Express's `Response` and
 * Fastify's `FastifyReply` both answer `status(code).send(object)` with the object as JSON (Fastify's
 * has no `json()`).
 */
interface HttpResponse {
  status(code: number): { send(body: unknown): void };
}

/**
 * Answers a SundialError thrown in the app's own HTTP routes (a refused schedule, a timer not found) as
 * apps/scheduler does — its status of docs/spec.md §2 and `{ error: { reason, field?, message, fix } }` —
 * instead of Nest's 500. Register it globally: `{ provide: APP_FILTER, useClass: SundialErrorFilter }`
 * among a module's providers, or `app.useGlobalFilters(new SundialErrorFilter(app.get(HttpAdapterHost)))`.
 * It answers through the app's HTTP adapter (Express or Fastify), or made without one (`new
 * SundialErrorFilter()`) through the response's own `status(code).send(body)`, which both have.
 */
@Catch(SundialError)
export class SundialErrorFilter implements ExceptionFilter<SundialError> {
  constructor(@Optional() @Inject(HttpAdapterHost) private readonly adapterHost?: HttpAdapterHost) {}

  catch(error: SundialError, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<unknown>();
    // A run-failure reason is never a refusal; thrown anyway (a handler's own error), it is a 500.
    const status = SUNDIAL_HTTP_STATUS[error.reason] ?? 500;
    const body = { error: error.toJSON() };
    const adapter = this.adapterHost?.httpAdapter;
    if (adapter) adapter.reply(response, body, status);
    else (response as HttpResponse).status(status).send(body);
  }
}
