/**
 * Worker thread of `evaluateAlternatives` (started from the compiled `alternativeWorker.js`): simulates the
 * alternatives it claims and posts each result until none is left.
 */
import { serveTasks } from '../threads/taskPool.js';
import type { Alternative } from './alternatives.js';
import { evaluateCandidate, type AlternativesJob } from './evaluate.js';

serveTasks<AlternativesJob, Alternative>(evaluateCandidate);
