// jstat ships no types; only the Student-t quantile is used (src/training/intervals.ts).
declare module 'jstat' {
  const jStat: { studentt: { inv(p: number, dof: number): number } };
  export default jStat;
}
