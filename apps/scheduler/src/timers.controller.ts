import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type {
  BackfillRange,
  CancelAnswer,
  ListResult,
  RescheduleWhen,
  Timer,
  TimersBackend,
  TimerSpec,
} from '@sundial/core';
import { isSundialError, SundialError } from '@sundial/core';
import { cancelScope } from './cancel-scope';
import { type ListQuery, parseListQuery } from './list-query-params';
import {
  answerWrite,
  type HeaderSetter,
  Idempotent,
  IdempotencyKey,
  putWriteOptions,
  writeOptions,
} from './idempotency-key';
import {
  BACKFILL_RESULT_SCHEMA,
  BACKFILL_SCHEMA,
  BATCH_SCHEMA,
  CANCELLED_COUNT_SCHEMA,
  CANCELLED_SCHEMA,
  LIST_SCHEMA,
  LIST_STATUS_SCHEMA,
  RESCHEDULE_SCHEMA,
  SPEC_OR_BATCH_SCHEMA,
  TIMER_SPEC_SCHEMA,
  TIMER_REF,
  withExample,
} from './openapi-schemas';
import {
  ApiAnswer,
  ApiRefusal,
  ApiRefusals,
  CREATED_HEADERS,
  ROUTE_REFUSALS,
  V1_REFUSALS,
} from './openapi-responses';
import { httpKeyNotFoundFix } from './http-error.filter';
import { putSpec } from './put-spec';
import { BODY_EXAMPLES, requiredBody } from './request-body';
import { TIMERS_API } from './timers-api.token';

/** The part of Express's response a route sets: its status, a header. */
interface HeaderReply extends HeaderSetter {
  status(code: number): HeaderReply;
}

/** What POST /v1/timers answers a batch (BATCH_SCHEMA): its timers in the body's order. */
interface BatchAnswer {
  items: Timer[];
}

/** Where a created timer is read (`Location` of a 201, docs/spec.md §5.2): its key, percent-encoded. */
export function timerLocation(key: string): string {
  return `/v1/timers/${encodeURIComponent(key)}`;
}

/**
 * docs/spec.md §5.2 over any `TimersBackend`. Bodies reach the API as parsed JSON of unknown shape: the API
 * validates them (normalizeSpec), so a refusal carries the same reason and fix as in-process. Every
 * state-changing route takes an `Idempotency-Key` header, passed on as the call's `requestId`.
 */
@ApiTags('timers')
@ApiBearerAuth()
@ApiRefusals(...V1_REFUSALS)
@Controller('v1/timers')
export class TimersController {
  constructor(@Inject(TIMERS_API) private readonly timers: TimersBackend) {}

  @Post()
  @ApiOperation({
    summary:
      "Schedule a timer (ifExists: error | replace | keep); 200 with the cancelled timer when keep meets a key cancelled within its tombstone. A JSON array of specs schedules them all or none (scheduleMany): 200 { items } in the body's order",
  })
  @ApiBody({ schema: withExample(SPEC_OR_BATCH_SCHEMA, BODY_EXAMPLES.spec) })
  @ApiAnswer(200, { oneOf: [TIMER_REF, BATCH_SCHEMA] })
  @ApiAnswer(201, TIMER_REF, CREATED_HEADERS)
  @ApiRefusal(ROUTE_REFUSALS.duplicateKey)
  @ApiRefusals(413, 415, 422)
  @Idempotent()
  async schedule(
    @Body() body: unknown,
    @Res({ passthrough: true }) response: HeaderReply,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<Timer | BatchAnswer> {
    const given = requiredBody(body, 'POST /v1/timers', BODY_EXAMPLES.spec);
    // A batch is scheduleMany's: every spec checked (and every `error` key) before anything is written, a
    // refusal naming its spec (`specs[i].<field>`). 200, not 201: no one Location, and `keep` may create none.
    const options = writeOptions(idempotencyKey);
    if (Array.isArray(given)) {
      response.status(200);
      const specs = given as TimerSpec[];
      const items = await answerWrite(response, idempotencyKey, () =>
        this.timers.scheduleMany(specs, options),
      );
      return { items };
    }
    const spec = given as TimerSpec;
    const timer = await answerWrite(response, idempotencyKey, () => this.timers.schedule(spec, options));
    // keep on a key cancelled within its tombstone (docs/spec.md §3.1): nothing was created, and no
    // timer is there to be read at a Location (GET answers 404)
    if (timer.status === 'cancelled') {
      response.status(200);
      return timer;
    }
    response.setHeader('Location', timerLocation(timer.key));
    return timer;
  }

  @Put(':key')
  @ApiOperation({ summary: 'Create or replace the timer under key: 201 when created, 200 when replaced' })
  @ApiBody({ schema: withExample(TIMER_SPEC_SCHEMA, BODY_EXAMPLES.putSpec) })
  @ApiAnswer(200, TIMER_REF)
  @ApiAnswer(201, TIMER_REF, CREATED_HEADERS)
  @ApiRefusals(413, 415, 422)
  @Idempotent()
  async put(
    @Param('key') key: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: HeaderReply,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<Timer> {
    const spec = putSpec(key, requiredBody(body, 'PUT /v1/timers/:key', BODY_EXAMPLES.putSpec));
    // Two calls, each with its own request id: a retry answers 201 or 200 as the first try did. A refused
    // create is not remembered: once the replace was answered, the create is refused (`unlessAnswered`)
    // whatever the key holds now, and the replace answers again. Both are `partOf` the request the key
    // names, so the key used for another request is refused idempotency-conflict — between the two calls
    // too: the create refused duplicate-key keeps the key's pin for the replace (heldForNextStep).
    // Each step watched on its own: the answer is replayed when the step that made it was.
    const { create, replace } = putWriteOptions(idempotencyKey, spec);
    try {
      const created = await answerWrite(response, idempotencyKey, () =>
        this.timers.schedule({ ...spec, ifExists: 'error' }, create),
      );
      response.status(201).setHeader('Location', timerLocation(created.key));
      return created;
    } catch (error) {
      if (!isSundialError(error) || error.reason !== 'duplicate-key') throw error;
    }
    response.status(200);
    return answerWrite(response, idempotencyKey, () =>
      this.timers.schedule({ ...spec, ifExists: 'replace' }, replace),
    );
  }

  @Get()
  @ApiOperation({ summary: 'List live timers, by key order (by due order with dueBefore)' })
  @ApiQuery({ name: 'prefix', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'status', required: false, schema: LIST_STATUS_SCHEMA })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1 } })
  @ApiQuery({
    name: 'cursor',
    required: false,
    schema: { type: 'string' },
    description:
      "the nextCursor of the previous page, sent with that page's prefix, status and dueBefore (another is refused 400, detail.code cursor-other-list); limit may change",
  })
  @ApiQuery({
    name: 'dueBefore',
    required: false,
    schema: { type: 'string', example: '2030-01-01T00:00:00Z' },
    description: 'epoch ms or an ISO instant with Z or an offset: pending timers due by then, in due order',
  })
  @ApiAnswer(200, LIST_SCHEMA)
  list(@Query() query: ListQuery): Promise<ListResult> {
    return this.timers.list(parseListQuery(query));
  }

  @Get(':key')
  @ApiAnswer(200, TIMER_REF)
  @ApiRefusal(ROUTE_REFUSALS.endedAnswered)
  async get(@Param('key') key: string): Promise<Timer> {
    const timer = await this.timers.get(key);
    if (!timer) throw notFound(key);
    return timer;
  }

  @Delete()
  @ApiOperation({
    summary: 'Cancel every timer whose key starts with prefix, or every timer with all=true',
  })
  @ApiQuery({
    name: 'prefix',
    required: false,
    schema: { type: 'string', minLength: 1 },
    description: 'a non-empty key prefix (scope)',
  })
  @ApiQuery({ name: 'all', required: false, enum: ['true'], description: 'cancel every timer' })
  @ApiAnswer(200, CANCELLED_COUNT_SCHEMA)
  @ApiRefusals(422)
  @Idempotent()
  async cancelAll(
    @Query('prefix') prefix: string | undefined,
    @Query('all') all: string | undefined,
    @Res({ passthrough: true }) response: HeaderSetter,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<{ cancelled: number }> {
    const scope = cancelScope(prefix, all);
    const cancel = () => this.timers.cancelAll(scope, writeOptions(idempotencyKey));
    return { cancelled: await answerWrite(response, idempotencyKey, cancel) };
  }

  @Delete(':key')
  @ApiOperation({
    summary: 'Cancel the live timer under key; the kept row of one that ended is removed (cancelled: false)',
  })
  @ApiAnswer(200, CANCELLED_SCHEMA)
  @ApiRefusal(ROUTE_REFUSALS.endedRemoved)
  @ApiRefusals(422)
  @Idempotent()
  async cancel(
    @Param('key') key: string,
    @Res({ passthrough: true }) response: HeaderSetter,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<CancelAnswer> {
    // one write that tells the three apart: a read before it could meet another row than the one it removes
    const outcome = await answerWrite(response, idempotencyKey, () =>
      this.timers.cancelOutcome(key, writeOptions(idempotencyKey)),
    );
    if (outcome === null) throw notFound(key);
    return outcome === 'cancelled' ? { cancelled: true } : { cancelled: false, removed: outcome };
  }

  @Post(':key/reschedule')
  @HttpCode(200)
  @ApiBody({ schema: withExample(RESCHEDULE_SCHEMA, BODY_EXAMPLES.when) })
  @ApiAnswer(200, TIMER_REF)
  @ApiRefusal(ROUTE_REFUSALS.inactiveRunning)
  @ApiRefusals(404, 413, 415, 422)
  @Idempotent()
  reschedule(
    @Param('key') key: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: HeaderSetter,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<Timer> {
    const when = requiredBody(body, 'POST /v1/timers/:key/reschedule', BODY_EXAMPLES.when) as RescheduleWhen;
    return answerWrite(response, idempotencyKey, () =>
      this.timers.reschedule(key, when, writeOptions(idempotencyKey)),
    );
  }

  @Post(':key/pause')
  @HttpCode(200)
  @ApiAnswer(200, TIMER_REF)
  @ApiRefusal(ROUTE_REFUSALS.inactiveRunning)
  @ApiRefusals(404, 422)
  @Idempotent()
  pause(
    @Param('key') key: string,
    @Res({ passthrough: true }) response: HeaderSetter,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<Timer> {
    return this.onKey('pause', key, response, idempotencyKey);
  }

  @Post(':key/resume')
  @HttpCode(200)
  @ApiAnswer(200, TIMER_REF)
  // no 409: resuming a timer that is not paused (running too) answers it as it is
  @ApiRefusals(404, 422)
  @Idempotent()
  resume(
    @Param('key') key: string,
    @Res({ passthrough: true }) response: HeaderSetter,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<Timer> {
    return this.onKey('resume', key, response, idempotencyKey);
  }

  @Post(':key/trigger')
  @HttpCode(200)
  @ApiAnswer(200, TIMER_REF)
  @ApiRefusal(ROUTE_REFUSALS.inactiveRunningOrPaused)
  @ApiRefusals(404, 422)
  @Idempotent()
  trigger(
    @Param('key') key: string,
    @Res({ passthrough: true }) response: HeaderSetter,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<Timer> {
    return this.onKey('trigger', key, response, idempotencyKey);
  }

  @Post(':key/backfill')
  @HttpCode(200)
  @ApiOperation({ summary: 'Run the slots of a past range now, in order, each with its own due' })
  @ApiBody({ schema: withExample(BACKFILL_SCHEMA, BODY_EXAMPLES.range) })
  @ApiAnswer(200, BACKFILL_RESULT_SCHEMA)
  @ApiRefusal(ROUTE_REFUSALS.inactiveRunningOrPaused)
  @ApiRefusals(404, 413, 415, 422)
  @Idempotent()
  async backfill(
    @Param('key') key: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: HeaderSetter,
    @IdempotencyKey() idempotencyKey?: string,
  ): Promise<{ key: string; slots: number }> {
    const range = requiredBody(body, 'POST /v1/timers/:key/backfill', BODY_EXAMPLES.range) as BackfillRange;
    const { slots } = await answerWrite(response, idempotencyKey, () =>
      this.timers.backfill(key, range, writeOptions(idempotencyKey)),
    );
    return { key, slots };
  }

  /** pause, resume and trigger: the key's timer as the action left it. */
  private onKey(
    action: 'pause' | 'resume' | 'trigger',
    key: string,
    response: HeaderSetter,
    idempotencyKey: string | undefined,
  ): Promise<Timer> {
    return answerWrite(response, idempotencyKey, () =>
      this.timers[action](key, writeOptions(idempotencyKey)),
    );
  }
}

function notFound(key: string): SundialError {
  return new SundialError({
    reason: 'not-found',
    field: 'key',
    message: `no live timer under key "${key}"`,
    fix: httpKeyNotFoundFix(key),
  });
}
