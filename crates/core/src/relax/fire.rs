//! FIRE (Bitzek et al., PRL 97, 170201 (2006)): damped molecular dynamics with unit masses that
//! mixes the velocity towards the force while the power F.v stays positive, and stops and
//! shortens the time step when it turns negative.

/// The integrator's state.
pub struct Fire {
    v: Vec<f64>,
    dt: f64,
    alpha: f64,
    steps_downhill: usize,
}

const DT_MAX: f64 = 4.0;
const N_MIN: usize = 5;
const F_INC: f64 = 1.1;
const F_DEC: f64 = 0.5;
const ALPHA_START: f64 = 0.1;
const F_ALPHA: f64 = 0.99;

impl Fire {
    /// Start at rest with time step `dt` (atomic units with unit masses).
    pub fn new(n: usize, dt: f64) -> Self {
        Fire {
            v: vec![0.0; n],
            dt,
            alpha: ALPHA_START,
            steps_downhill: 0,
        }
    }

    /// The displacement for the generalised force `f = -gradient` (before trust-radius scaling).
    pub fn step(&mut self, f: &[f64]) -> Vec<f64> {
        let power: f64 = f.iter().zip(&self.v).map(|(a, b)| a * b).sum();
        if power > 0.0 {
            let vn = self.v.iter().map(|x| x * x).sum::<f64>().sqrt();
            let fnorm = f.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-300);
            for (v, fi) in self.v.iter_mut().zip(f) {
                *v = (1.0 - self.alpha) * *v + self.alpha * fi / fnorm * vn;
            }
            self.steps_downhill += 1;
            if self.steps_downhill > N_MIN {
                self.dt = (self.dt * F_INC).min(DT_MAX);
                self.alpha *= F_ALPHA;
            }
        } else {
            self.v.iter_mut().for_each(|v| *v = 0.0);
            self.dt *= F_DEC;
            self.alpha = ALPHA_START;
            self.steps_downhill = 0;
        }
        // Semi-implicit Euler.
        for (v, fi) in self.v.iter_mut().zip(f) {
            *v += self.dt * fi;
        }
        self.v.iter().map(|v| v * self.dt).collect()
    }

    /// Stop (after a rejected step).
    pub fn halt(&mut self) {
        self.v.iter_mut().for_each(|v| *v = 0.0);
        self.dt *= F_DEC;
        self.alpha = ALPHA_START;
        self.steps_downhill = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relaxes_a_harmonic_well() {
        let k = [0.5, 0.2];
        let mut x = vec![1.0, -0.7];
        let mut fire = Fire::new(2, 0.5);
        for _ in 0..300 {
            let f: Vec<f64> = x.iter().zip(&k).map(|(xi, ki)| -ki * xi).collect();
            let d = fire.step(&f);
            x.iter_mut().zip(&d).for_each(|(a, b)| *a += b);
        }
        assert!(x.iter().all(|v| v.abs() < 1e-6), "{x:?}");
    }
}
