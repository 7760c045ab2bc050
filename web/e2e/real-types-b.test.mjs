// The web client against the real suite: a whole round of kaat and of stack by clicking, four
// players (real.test.mjs has the whole classic game). GATEWAY_URL as in real.test.mjs.
import { wholeRoundTests } from './real-lib.mjs';

wholeRoundTests(['kaat', 'stack']);
