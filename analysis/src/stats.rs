//! Means and 95 % confidence intervals over replicates.

/// A mean over replicates with its 95 % confidence half-width (Student's t), when there are at
/// least two.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanCi {
    /// The mean.
    pub mean: f64,
    /// t_{0.975, n−1} × s / √n, `None` for fewer than two replicates.
    pub half_width: Option<f64>,
    /// Replicates with a value.
    pub n: usize,
}

/// t_{0.975, df} for df = 1..=30; beyond, the normal 1.96 is within 2 % of the exact value.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The two-sided 95 % quantile of Student's t with `df` degrees of freedom (df ≥ 1).
pub fn t_975(df: usize) -> f64 {
    T_975.get(df.wrapping_sub(1)).copied().unwrap_or(1.96)
}

impl MeanCi {
    /// From a mean, a sample standard deviation (ddof = 1) and a count, as polars aggregates
    /// them.
    pub fn from_moments(mean: f64, std: Option<f64>, n: usize) -> MeanCi {
        let half_width = match (std, n) {
            (Some(s), n) if n >= 2 && s.is_finite() => Some(t_975(n - 1) * s / (n as f64).sqrt()),
            _ => None,
        };
        MeanCi {
            mean,
            half_width,
            n,
        }
    }

    /// From the values themselves.
    pub fn of(values: &[f64]) -> MeanCi {
        let n = values.len();
        if n == 0 {
            return MeanCi {
                mean: f64::NAN,
                half_width: None,
                n,
            };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let std = (n >= 2).then(|| {
            let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        MeanCi::from_moments(mean, std, n)
    }

    /// `mean ± half-width` with `decimals` places (`mean` alone without an interval).
    pub fn format(&self, decimals: usize) -> String {
        if self.mean.is_nan() {
            return "—".to_owned();
        }
        match self.half_width {
            Some(h) => format!("{:.*} ± {:.*}", decimals, self.mean, decimals, h),
            None => format!("{:.*}", decimals, self.mean),
        }
    }
}

/// The `q` quantile of `sorted` (ascending) by the nearest rank: the value at index
/// round((n − 1) q), halves away from zero, as polars' `QuantileMethod::Nearest` takes it, so
/// that reports read before and after the report stopped using polars' engine agree; 0 for no
/// values.
pub(crate) fn quantile_nearest(sorted: &[f64], q: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return 0.0;
    };
    let index = ((last as f64) * q.clamp(0.0, 1.0)).round() as usize;
    sorted[index.min(last)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_uses_students_t_on_the_sample_deviation() {
        // Values 1..=5: mean 3, s = √2.5, t_{0.975,4} = 2.776.
        let ci = MeanCi::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(ci.mean, 3.0);
        let expected = 2.776 * 2.5f64.sqrt() / 5f64.sqrt();
        assert!((ci.half_width.unwrap_or(0.0) - expected).abs() < 1e-12);
        assert_eq!(ci.format(2), "3.00 ± 1.96");
        assert_eq!(MeanCi::of(&[7.0]).format(1), "7.0");
        assert_eq!(t_975(100), 1.96);
    }

    #[test]
    fn nearest_rank_quantiles_round_halves_up() {
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        // (n − 1) q = 2.25 → index 2; 4.5 → 5 (a half rounds away from zero); 8.1 → 8.
        assert_eq!(quantile_nearest(&ten, 0.25), 3.0);
        assert_eq!(quantile_nearest(&ten, 0.5), 6.0);
        assert_eq!(quantile_nearest(&ten, 0.9), 9.0);
        assert_eq!(quantile_nearest(&ten, 0.0), 1.0);
        assert_eq!(quantile_nearest(&ten, 1.0), 10.0);
        assert_eq!(quantile_nearest(&[4.0], 0.75), 4.0);
        assert_eq!(quantile_nearest(&[], 0.5), 0.0);
    }
}
