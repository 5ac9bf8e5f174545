// Imported by main.ts once the environment is read (narrow modules, no `http`), before anything loads
// Nest, Express or `http`: the http instrumentation only sees what is required after it
// (libs/server/src/tracing.ts). The worker's handlers module loads after it too.
import { startTracing } from '../../../libs/server/src/tracing';

startTracing('sundial-worker');
