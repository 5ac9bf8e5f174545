import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Inject, Injectable } from '@nestjs/common';
import { SundialError } from '@sundial/core';
import type { IncomingMessage } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';

/** Injection token of SUNDIAL_API_TOKEN (null when unset). */
export const API_TOKEN = Symbol('ApiToken');

/** With SUNDIAL_API_TOKEN set, a `/v1` call needs `Authorization: Bearer <token>`. */
@Injectable()
export class ApiTokenGuard implements CanActivate {
  private readonly expected: Buffer | null;

  constructor(@Inject(API_TOKEN) token: string | null) {
    this.expected = token === null ? null : digest(token);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) return true;
    const header = context.switchToHttp().getRequest<IncomingMessage>().headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    // Comparing digests keeps the comparison constant-time whatever the length sent.
    if (match && timingSafeEqual(digest(match[1].trim()), this.expected)) return true;
    throw new SundialError({
      reason: 'unauthorized',
      field: 'authorization',
      message: match ? 'the API token sent is not the configured one' : 'missing Authorization header',
      fix: 'Send the header `Authorization: Bearer <SUNDIAL_API_TOKEN>`.',
    });
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
