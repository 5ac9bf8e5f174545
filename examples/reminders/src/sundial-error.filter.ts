import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import { SundialError } from '@sundial/core';

/** The part of Express's response the filter uses. */
interface JsonResponse {
  status(code: number): { json(body: unknown): void };
}

const STATUS: Record<string, number> = {
  invalid: 400,
  'payload-too-large': 413,
  'not-found': 404,
  'duplicate-key': 409,
  inactive: 409,
  unavailable: 503,
};

/** A refused call answers with its status and `{ error: { reason, field?, message, fix } }`. */
@Catch(SundialError)
export class SundialErrorFilter implements ExceptionFilter {
  catch(error: SundialError, host: ArgumentsHost): void {
    host
      .switchToHttp()
      .getResponse<JsonResponse>()
      .status(STATUS[error.reason] ?? 500)
      .json({ error: error.toJSON() });
  }
}
