/**
 * What a test's own writes to a store are applied under when it asks for nothing else:
 * the default policy's history limits and the real clock (a Memory service hands its
 * store its own; the contract suites use a test clock).
 */

import { writeRules } from '../../src/memory/model/apply.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';
import type { WriteRules } from '../../src/memory/port.js';

export const rules: WriteRules = writeRules(DEFAULT_POLICY, Date.now);
