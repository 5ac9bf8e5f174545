import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { TimersApi } from '@sundial/core';
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
    return { id, live: await this.timers.check(id) };
  }
}
