// The web client against the real suite: a whole round of piles and of hidden by clicking, four
// players (real.test.mjs has the whole classic game). GATEWAY_URL as in real.test.mjs.
import { wholeRoundTests } from './real-lib.mjs';

wholeRoundTests(['piles', 'hidden']);
