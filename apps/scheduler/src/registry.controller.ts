import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { refusals, type TimersApi } from '@sundial/core';
import { isTimerId, MAX_PARTITIONS } from '@sundial/redis';
import { TIMERS_API } from './timers-api.token';

/** `check(id)` and `snapshot()`: which entry ids are live right now (point-in-time). */
@ApiTags('registry')
@ApiBearerAuth()
@Controller('v1/registry')
export class RegistryController {
  constructor(@Inject(TIMERS_API) private readonly timers: TimersApi) {}

  @Get()
  @ApiOperation({ summary: 'Ids of every live timer entry' })
  async snapshot(): Promise<{ ids: string[] }> {
    return { ids: await this.timers.snapshot() };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Whether the entry with this id is still live' })
  async check(@Param('id') id: string): Promise<{ id: string; live: boolean }> {
    // check(id) answers false for any string it cannot read; over HTTP a malformed id is the caller's
    // mistake (a key, a truncated copy), and echoing it back would say "not live" of something no timer has.
    const partition = Number(id.slice(id.lastIndexOf('p') + 1));
    if (!isTimerId(id) || partition >= MAX_PARTITIONS) throw refusals.malformedId(id);
    return { id, live: await this.timers.check(id) };
  }
}
