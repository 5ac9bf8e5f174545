import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import { SundialError, SUNDIAL_HTTP_STATUS } from '@sundial/core';

/** The part of Express's response the filter uses. */
interface JsonResponse {
  status(code: number): { json(body: unknown): void };
}

/** A refused call answers with its status and `{ error: { reason, field?, message, fix } }`. */
@Catch(SundialError)
export class SundialErrorFilter implements ExceptionFilter {
  catch(error: SundialError, host: ArgumentsHost): void {
    host
      .switchToHttp()
      .getResponse<JsonResponse>()
      .status(SUNDIAL_HTTP_STATUS[error.reason] ?? 500)
      .json({ error: error.toJSON() });
  }
}
