//! Brent's bracketing root finder (inverse quadratic interpolation, secant and bisection steps).
//!
//! Written here rather than pulled in because the rating code needs exactly one scalar solver and
//! the LLM Chess estimate it reproduces uses the same method (`scipy.optimize.brentq`).

/// A root of `f` in `[a, b]` to within `tol`, or `None` when `f(a)` and `f(b)` have the same sign.
///
/// `f` must be continuous on the bracket; the result is the point where the last bracket closed.
pub(crate) fn brent(f: impl Fn(f64) -> f64, a: f64, b: f64, tol: f64) -> Option<f64> {
    const MAX_ITER: usize = 200;
    let (mut a, mut b) = (a, b);
    let (mut fa, mut fb) = (f(a), f(b));
    if fa == 0.0 {
        return Some(a);
    }
    if fb == 0.0 {
        return Some(b);
    }
    if fa.signum() == fb.signum() || fa.is_nan() || fb.is_nan() {
        return None;
    }
    // `b` is the best estimate, `a` the previous one, `c` keeps the opposite sign to `b`.
    let (mut c, mut fc) = (a, fa);
    let mut d = b - a;
    let mut e = d;
    for _ in 0..MAX_ITER {
        if fb.signum() == fc.signum() {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol1 = 2.0 * f64::EPSILON * b.abs() + 0.5 * tol;
        let half = 0.5 * (c - b);
        if half.abs() <= tol1 || fb == 0.0 {
            return Some(b);
        }
        if e.abs() >= tol1 && fa.abs() > fb.abs() {
            // Try interpolation: secant when only two points are distinct, else inverse quadratic.
            let s = fb / fa;
            let (mut p, mut q) = if a == c {
                (2.0 * half * s, 1.0 - s)
            } else {
                let qa = fa / fc;
                let r = fb / fc;
                (
                    s * (2.0 * half * qa * (qa - r) - (b - a) * (r - 1.0)),
                    (qa - 1.0) * (r - 1.0) * (s - 1.0),
                )
            };
            if p > 0.0 {
                q = -q;
            } else {
                p = -p;
            }
            // Accept the step only if it stays well inside the bracket and keeps shrinking.
            if 2.0 * p < (3.0 * half * q - (tol1 * q).abs()).min((e * q).abs()) {
                e = d;
                d = p / q;
            } else {
                d = half;
                e = d;
            }
        } else {
            d = half;
            e = d;
        }
        a = b;
        fa = fb;
        b += if d.abs() > tol1 {
            d
        } else {
            tol1.copysign(half)
        };
        fb = f(b);
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::brent;

    #[test]
    fn finds_a_cubic_root() {
        let root = brent(|x| x * x * x - 2.0 * x - 5.0, 2.0, 3.0, 1e-12).expect("bracketed");
        assert!((root - 2.094_551_481_542_327).abs() < 1e-10, "{root}");
    }

    #[test]
    fn finds_a_root_at_the_bracket_end_and_refuses_no_sign_change() {
        assert_eq!(brent(|x| x - 1.0, 1.0, 4.0, 1e-12), Some(1.0));
        assert_eq!(brent(|x| x * x + 1.0, -1.0, 1.0, 1e-12), None);
    }

    #[test]
    fn handles_a_flat_then_steep_function() {
        let root = brent(|x: f64| (x - 0.3).powi(9), -2.0, 1.0, 1e-14).expect("bracketed");
        assert!((root - 0.3).abs() < 1e-2, "{root}");
        let root = brent(|x: f64| x.exp() - 1e6, 0.0, 40.0, 1e-12).expect("bracketed");
        assert!((root - 1e6f64.ln()).abs() < 1e-9, "{root}");
    }
}
