import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAnswer, ApiRefusals, V1_REFUSALS } from './openapi-responses';
import { REGISTRY_CHECK_SCHEMA, REGISTRY_SCHEMA } from './openapi-schemas';
import { refusals, type TimersApi } from '@sundial/core';
import { isTimerId, MAX_PARTITIONS } from '@sundial/redis';
import { TIMERS_API } from './timers-api.token';

/** `check(id)` and `snapshot()`: which entry ids are live right now (point-in-time). */
@ApiTags('registry')
@ApiBearerAuth()
@ApiRefusals(...V1_REFUSALS)
@Controller('v1/registry')
export class RegistryController {
  constructor(@Inject(TIMERS_API) private readonly timers: TimersApi) {}

  @Get()
  @ApiOperation({ summary: 'Ids of every live timer entry' })
  @ApiAnswer(200, REGISTRY_SCHEMA)
  async snapshot(): Promise<{ ids: string[] }> {
    return { ids: await this.timers.snapshot() };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Whether the entry with this id is still live' })
  @ApiAnswer(200, REGISTRY_CHECK_SCHEMA)
  async check(@Param('id') id: string): Promise<{ id: string; live: boolean }> {
    // check(id) answers false for any string it cannot read; over HTTP a malformed id is the caller's
    // mistake (a key, a truncated copy), and echoing it back would say "not live" of something no timer has.
    const partition = Number(id.slice(id.lastIndexOf('p') + 1));
    if (!isTimerId(id) || partition >= MAX_PARTITIONS) throw refusals.malformedId(id);
    return { id, live: await this.timers.check(id) };
  }
}
