/**
 * Where the roots of an AR or MA polynomial lie: a fit whose polynomial has a root on or near the unit circle
 * (non-stationary AR, non-invertible MA) is not a candidate of any family that fits one.
 */
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';

/**
 * auto.arima's guard: a fit whose AR or MA polynomial has a root within this modulus of the unit circle is
 * not a candidate. Such a fit is a unit root the differencing did not take out (its forecasts run away, e.g.
 * AR1 + AR2 = 1.002 on US employment: +45,000 in a year) or an MA term that cannot be inverted.
 */
export const MIN_ROOT_MODULUS = 1.01;

/**
 * Smallest modulus of the roots of 1 - c1 z^l - ... - ck z^(kl) (Box-Jenkins signs: the AR and MA terms both
 * with a minus). The roots in w = z^l are the reciprocals of the companion matrix's eigenvalues, and |z| =
 * |w|^(1/l). No coefficients: no root (Infinity); NaN coefficients (a failed fit) count as a root on the circle.
 */
export function smallestRootModulus(coefs: readonly number[], lag: number): number {
  const k = coefs.length;
  if (k === 0) return Number.POSITIVE_INFINITY;
  if (coefs.some((v) => !Number.isFinite(v))) return 1;
  const companion = Matrix.zeros(k, k);
  coefs.forEach((v, i) => companion.set(0, i, v));
  for (let i = 1; i < k; i++) companion.set(i, i - 1, 1);
  const eig = new EigenvalueDecomposition(companion);
  let min = Number.POSITIVE_INFINITY;
  eig.realEigenvalues.forEach((re, i) => {
    const modulus = Math.hypot(re, eig.imaginaryEigenvalues[i]!);
    min = Math.min(min, modulus > 0 ? (1 / modulus) ** (1 / lag) : Number.POSITIVE_INFINITY);
  });
  return min;
}
