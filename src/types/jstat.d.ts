// jstat ships no types; the Student-t quantile (src/training/selection/intervals.ts), and the chi-square distribution function
// and Spearman's rank correlation (bench/forecast/panels-study.ts's Ljung-Box test and `optimism`) are used.
declare module 'jstat' {
  const jStat: {
    studentt: { inv(p: number, dof: number): number };
    chisquare: { cdf(x: number, dof: number): number };
    spearmancoeff(a: number[], b: number[]): number;
  };
  export default jStat;
}
