/**
 * Least squares from the normal equations: a system kept as X'X, X'y and y'y (one pass over the rows, however
 * many fits follow), solved on any subset of its columns, ridge-regularised, by Cholesky.
 */
import { CholeskyDecomposition, Matrix } from 'ml-matrix';

/** X'X (row-major, width x width), X'y and y'y of a design, and the rows summed into them. */
export interface GramSystem {
  /** Column count. */
  width: number;
  gram: Float64Array;
  cross: Float64Array;
  yy: number;
  /** Rows in the sums. */
  rows: number;
}

/** Ridge-regularised least squares on a subset of the design's columns: coefficients and residual sum of squares. */
export function solveSubset(design: GramSystem, columns: number[], ridge: number): { beta: number[]; rss: number } | null {
  const m = columns.length;
  const a = new Matrix(m, m);
  const c = new Matrix(m, 1);
  columns.forEach((ci, i) => {
    columns.forEach((cj, j) => a.set(i, j, design.gram[ci * design.width + cj]! + (i === j ? ridge : 0)));
    c.set(i, 0, design.cross[ci]!);
  });
  const chol = new CholeskyDecomposition(a);
  if (!chol.isPositiveDefinite()) return null;
  const beta = chol.solve(c).getColumn(0);
  // RSS of the ridge solution = y'y - 2 b'c + b'G b (G without the ridge).
  let bc = 0;
  let bgb = 0;
  columns.forEach((ci, i) => {
    bc += beta[i]! * design.cross[ci]!;
    columns.forEach((cj, j) => (bgb += beta[i]! * beta[j]! * design.gram[ci * design.width + cj]!));
  });
  return { beta, rss: Math.max(design.yy - 2 * bc + bgb, 0) };
}

/**
 * Residual sums of squares of the nested fits on the first 1, 2, ..., m of `columns` (ridge-regularised):
 * the Cholesky factor of a leading block is the leading block of the whole factor, so one factorisation and
 * one forward substitution z = L^-1 X'y give them all, rss(j) = y'y - (z_1^2 + ... + z_j^2).
 */
export function nestedRss(design: GramSystem, columns: number[], ridge: number): number[] {
  const m = columns.length;
  const l = new Float64Array(m * m);
  const z = new Float64Array(m);
  const out: number[] = [];
  let explained = 0;
  for (let i = 0; i < m; i++) {
    const ci = columns[i]!;
    for (let j = 0; j <= i; j++) {
      let sum = design.gram[ci * design.width + columns[j]!]! + (i === j ? ridge : 0);
      for (let k = 0; k < j; k++) sum -= l[i * m + k]! * l[j * m + k]!;
      if (i === j) {
        // Not positive: this column adds nothing the earlier ones do not span, and neither can later fits.
        if (!(sum > 0)) return out;
        l[i * m + i] = Math.sqrt(sum);
      } else {
        l[i * m + j] = sum / l[j * m + j]!;
      }
    }
    let zi = design.cross[ci]!;
    for (let k = 0; k < i; k++) zi -= l[i * m + k]! * z[k]!;
    z[i] = zi / l[i * m + i]!;
    explained += z[i]! * z[i]!;
    out.push(Math.max(design.yy - explained, 0));
  }
  return out;
}

/** Least squares of y on the columns (rows x columns), or null when singular. */
export function leastSquares(columns: Float64Array[], y: Float64Array): { beta: number[]; rss: number } | null {
  const m = columns.length;
  let yy = 0;
  for (const v of y) yy += v * v;
  if (m === 0) return { beta: [], rss: yy };
  const gram = new Float64Array(m * m);
  const cross = new Float64Array(m);
  for (let a = 0; a < m; a++) {
    const ca = columns[a]!;
    for (let i = 0; i < y.length; i++) cross[a]! += ca[i]! * y[i]!;
    for (let b = a; b < m; b++) {
      const cb = columns[b]!;
      let s = 0;
      for (let i = 0; i < y.length; i++) s += ca[i]! * cb[i]!;
      gram[a * m + b] = s;
      gram[b * m + a] = s;
    }
  }
  const all = Array.from({ length: m }, (_, i) => i);
  return solveSubset({ width: m, gram, cross, yy, rows: y.length }, all, 1e-12 * Math.max(1, yy));
}
