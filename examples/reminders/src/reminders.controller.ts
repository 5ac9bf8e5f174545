import { Body, Controller, Delete, HttpCode, Inject, Param, Post } from '@nestjs/common';
import type { Duration, Timer } from '@sundial/core';
import { RemindersService } from './reminders.service';

interface CreateReminder {
  text: string;
  delay: Duration | number;
}

/** `POST /entities/:entity/reminders/:id`, `…/snooze`, `DELETE …`: a SundialError answers 4xx by its reason. */
@Controller('entities/:entity/reminders')
export class RemindersController {
  constructor(@Inject(RemindersService) private readonly reminders: RemindersService) {}

  @Post(':id')
  create(
    @Param('entity') entity: string,
    @Param('id') id: string,
    @Body() body: CreateReminder,
  ): Promise<Timer> {
    return this.reminders.create(entity, id, body.text, body.delay);
  }

  @Post(':id/snooze')
  @HttpCode(200)
  snooze(
    @Param('entity') entity: string,
    @Param('id') id: string,
    @Body() body: { delay: Duration | number },
  ): Promise<Timer> {
    return this.reminders.snooze(entity, id, body.delay);
  }

  @Delete(':id')
  async cancel(@Param('entity') entity: string, @Param('id') id: string): Promise<{ cancelled: boolean }> {
    return { cancelled: await this.reminders.cancel(entity, id) };
  }

  @Delete()
  async cancelAll(@Param('entity') entity: string): Promise<{ cancelled: number }> {
    return { cancelled: await this.reminders.cancelAll(entity) };
  }
}
