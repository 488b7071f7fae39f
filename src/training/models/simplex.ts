/**
 * Nelder-Mead minimisation (the downhill simplex of Nelder and Mead 1965, standard coefficients
 * 1, 2, 0.5, 0.5), deterministic, for the smoothing families' few parameters (ets.ts, theta.ts). Written
 * here because the npm package for it, fmin 0.0.4, throws a ReferenceError in its shrink step when loaded
 * as the ES module it declares itself to be.
 */
export interface Minimum {
  x: number[];
  fx: number;
}

export function nelderMead(f: (x: number[]) => number, x0: number[], options: { maxIterations: number; step: number; tolerance: number }): Minimum {
  const n = x0.length;
  const points: Minimum[] = [{ x: x0.slice(), fx: f(x0) }];
  for (let i = 0; i < n; i++) {
    const x = x0.slice();
    x[i] = (x[i] as number) + options.step;
    points.push({ x, fx: f(x) });
  }
  const along = (from: number[], to: number[], t: number) => from.map((v, i) => v + t * ((to[i] as number) - v));
  for (let iteration = 0; iteration < options.maxIterations; iteration++) {
    points.sort((a, b) => a.fx - b.fx);
    const best = points[0] as Minimum;
    const worst = points[n] as Minimum;
    if (Math.abs(worst.fx - best.fx) <= options.tolerance * (Math.abs(best.fx) + 1e-12)) break;
    const centroid = new Array<number>(n).fill(0);
    for (let k = 0; k < n; k++) (points[k] as Minimum).x.forEach((v, i) => (centroid[i] = (centroid[i] as number) + v / n));
    const reflected = along(centroid, worst.x, -1);
    const fr = f(reflected);
    if (fr < best.fx) {
      const expanded = along(centroid, worst.x, -2);
      const fe = f(expanded);
      points[n] = fe < fr ? { x: expanded, fx: fe } : { x: reflected, fx: fr };
    } else if (fr < (points[n - 1] as Minimum).fx) {
      points[n] = { x: reflected, fx: fr };
    } else {
      const outside = fr < worst.fx;
      const contracted = along(centroid, outside ? reflected : worst.x, 0.5);
      const fc = f(contracted);
      if (fc < (outside ? fr : worst.fx)) points[n] = { x: contracted, fx: fc };
      else {
        for (let k = 1; k <= n; k++) {
          const x = along(best.x, (points[k] as Minimum).x, 0.5);
          points[k] = { x, fx: f(x) };
        }
      }
    }
  }
  points.sort((a, b) => a.fx - b.fx);
  return points[0] as Minimum;
}
