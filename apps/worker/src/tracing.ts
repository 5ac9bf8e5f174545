// Imported by main.ts right after register-paths, before anything loads Nest, Express or `http`:
// the http instrumentation only sees what is required after it (libs/server/src/tracing.ts).
import { startTracing } from '../../../libs/server/src/tracing';

startTracing('sundial-worker');
