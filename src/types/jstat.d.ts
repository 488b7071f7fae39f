// jstat ships no types; the Student-t quantile (src/training/intervals.ts) and the chi-square distribution function
// (bench/forecast/panels-study.ts's Ljung-Box test) are used.
declare module 'jstat' {
  const jStat: { studentt: { inv(p: number, dof: number): number }; chisquare: { cdf(x: number, dof: number): number } };
  export default jStat;
}
