import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { LedgerEntry, NextTime, Preview, TimerDescription, TimersApi, TimerSpec } from '@sundial/core';
import { DESCRIPTION_SCHEMA, HISTORY_SCHEMA, NEXT_SCHEMA, PREVIEW_SCHEMA } from './openapi-explain-schemas';
import { TIMER_SPEC_SCHEMA, withExample } from './openapi-schemas';
import { ApiAnswer, ApiRefusal, ApiRefusals, ROUTE_REFUSALS, V1_REFUSALS } from './openapi-responses';
import { queryNumber } from './list-query-params';
import { BODY_EXAMPLES, requiredBody } from './request-body';
import { TIMERS_API } from './timers-api.token';

/** `count` and `limit` as the TimersApi bounds them: whole numbers from 1 to `maximum`. */
const upTo = (maximum: number) => ({ type: 'integer', minimum: 1, maximum }) as const;

/**
 * docs/spec.md §3.9 over HTTP: a timer's ledger, its coming due times, a spec's preview (nothing
 * written) and all of it at once. The TimersApi checks `count` and `limit` (1..100, 1..200) and the spec;
 * RouteInputGuard has refused any other query parameter, and a repeated one.
 */
@ApiTags('timers')
@ApiBearerAuth()
@ApiRefusals(...V1_REFUSALS)
@Controller('v1')
export class ExplainController {
  constructor(@Inject(TIMERS_API) private readonly timers: TimersApi) {}

  @Get('timers/:key/history')
  @ApiOperation({
    summary: "The timer's ledger, newest first (404 when the key has no row, tombstone or ledger)",
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: upTo(200),
    description: 'entries (default 50, at most 200)',
  })
  @ApiAnswer(200, HISTORY_SCHEMA)
  @ApiRefusal(ROUTE_REFUSALS.noLedger)
  async history(
    @Param('key') key: string,
    @Query('limit') limit?: string,
  ): Promise<{ key: string; entries: LedgerEntry[] }> {
    return { key, entries: await this.timers.history(key, { limit: queryNumber(limit) }) };
  }

  @Get('timers/:key/next')
  @ApiOperation({ summary: "The timer's next due times, with its zone's UTC offset at each" })
  @ApiQuery({
    name: 'count',
    required: false,
    schema: upTo(100),
    description: 'due times (default 10, at most 100)',
  })
  @ApiAnswer(200, NEXT_SCHEMA)
  @ApiRefusal(ROUTE_REFUSALS.endedAnswered)
  async next(
    @Param('key') key: string,
    @Query('count') count?: string,
  ): Promise<{ key: string; times: NextTime[] }> {
    return { key, times: await this.timers.next(key, { count: queryNumber(count) }) };
  }

  @Get('timers/:key/describe')
  @ApiOperation({ summary: 'The timer, its next due times, its ledger and its counters' })
  @ApiQuery({
    name: 'count',
    required: false,
    schema: upTo(100),
    description: 'due times (default 10, at most 100)',
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: upTo(200),
    description: 'ledger entries (default 50, at most 200)',
  })
  @ApiAnswer(200, DESCRIPTION_SCHEMA)
  @ApiRefusal(ROUTE_REFUSALS.endedAnswered)
  describe(
    @Param('key') key: string,
    @Query('count') count?: string,
    @Query('limit') limit?: string,
  ): Promise<TimerDescription> {
    return this.timers.describe(key, { count: queryNumber(count), limit: queryNumber(limit) });
  }

  @Post('preview')
  @HttpCode(200)
  @ApiOperation({ summary: 'Validate a TimerSpec and show its first due times; writes nothing' })
  @ApiQuery({
    name: 'count',
    required: false,
    schema: upTo(100),
    description: 'due times (default 10, at most 100)',
  })
  @ApiBody({ schema: withExample(TIMER_SPEC_SCHEMA, BODY_EXAMPLES.spec) })
  // Taken, not refused: a client that sends one on every POST (a retry library) previews as well.
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'Ignored: a preview writes nothing, so a retry is safe without it. Not recorded either: the same key on a later write is that write’s.',
  })
  @ApiAnswer(200, PREVIEW_SCHEMA)
  @ApiRefusals(413, 415)
  preview(@Body() body: unknown, @Query('count') count?: string): Promise<Preview> {
    const spec = requiredBody(body, 'POST /v1/preview', BODY_EXAMPLES.spec) as TimerSpec;
    return this.timers.preview(spec, { count: queryNumber(count) });
  }
}
