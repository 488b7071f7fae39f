/** Status record codes, stored in stat_records.status: a run's record is Open until it is closed as one of the others. */
export const STAT_STATUS = { Open: 0, Finished: 1, Failed: 2, Aborted: 3 } as const;
export type StatStatus = (typeof STAT_STATUS)[keyof typeof STAT_STATUS];
export const isStatStatus = (n: number): n is StatStatus => Number.isInteger(n) && n >= STAT_STATUS.Open && n <= STAT_STATUS.Aborted;
/** The codes that close a record. */
export type ClosedStatStatus = Exclude<StatStatus, typeof STAT_STATUS.Open>;
