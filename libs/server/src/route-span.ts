import type { INestApplication } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Names the HTTP server span of a routed request `{method} {route}` with `http.route` (the route's
 * pattern, `/v1/timers/:key/trigger`), as OpenTelemetry's HTTP conventions name server spans: the http
 * instrumentation alone knows only the method, so every request was `POST` or `GET`. Express sets the
 * matched route on the request; read when the answer is written ('finish'), before the instrumentation
 * ends the span ('close'). A request no route matched keeps the method alone, as the conventions say.
 * With tracing off there is no active span: one `getActiveSpan()` a request.
 */
export function nameServerSpans(app: INestApplication): void {
  app.use(
    (
      request: IncomingMessage & { route?: { path?: unknown } },
      response: ServerResponse,
      next: () => void,
    ) => {
      const span = trace.getActiveSpan();
      if (span)
        response.once('finish', () => {
          const route = request.route?.path;
          if (typeof route !== 'string') return;
          span.setAttribute('http.route', route);
          span.updateName(`${request.method} ${route}`);
        });
      next();
    },
  );
}
