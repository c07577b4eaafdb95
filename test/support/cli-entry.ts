// Runs the CLI from source (tests spawn this instead of the built bin/ingress-rx).
import { runProcess } from '../../src/cli/main.js';

await runProcess(process.argv.slice(2));
