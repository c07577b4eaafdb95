// Runs the CLI from source (tests spawn this instead of the built bin/ingress-rx).
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
