import { ApiExcludeController, ApiTags } from '@nestjs/swagger';
import { HealthCheck } from '@nestjs/terminus';
import { HealthController, MetricsController } from '@sundial/server';

/** Classes already decorated: `ApiTags` appends, so a second app in one process would list 'health' twice. */
const documented = new WeakSet<object>();

/**
 * The OpenAPI metadata of the probe controllers both apps share (`@sundial/server`): `/health/*` under the
 * `health` tag with terminus's responses (its `@HealthCheck()`'s swagger half), `/metrics` left out. Applied here rather than as decorators in `@sundial/server` so that
 * the worker, which builds no OpenAPI document, never loads @nestjs/swagger (some 530 modules, ~0.25 s
 * CPU a start). Call before `SwaggerModule.createDocument` reads them.
 */
export function documentProbes(): void {
  if (documented.has(HealthController)) return;
  documented.add(HealthController);
  ApiTags('health')(HealthController);
  // The Cache-Control header is the controller's own `@HealthCheck(NO_SWAGGER)`: only the documentation here.
  const documentation = HealthCheck({ noCache: false, swaggerDocumentation: true });
  for (const route of ['live', 'ready'] as const) {
    const descriptor = Object.getOwnPropertyDescriptor(HealthController.prototype, route);
    if (descriptor) documentation(HealthController.prototype, route, descriptor);
  }
  ApiExcludeController()(MetricsController);
}
