// Types of reportJobs.mjs for the TypeScript check of the tests (tsconfig.test.json).
export declare const OUT: string;
export declare const REPORT_JOBS: string[][];
