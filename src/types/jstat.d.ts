// jstat ships no types; only the Student-t quantile (src/training/selection/intervals.ts) is used.
declare module 'jstat' {
  const jStat: {
    studentt: { inv(p: number, dof: number): number };
  };
  export default jStat;
}
