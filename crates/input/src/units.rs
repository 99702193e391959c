//! Units. Everything inside planewave is in Hartree atomic units (Ha, bohr);
//! these helpers convert what users write.

/// Hartree per Rydberg.
pub const HARTREE_PER_RYDBERG: f64 = 0.5;
/// Electron-volts per Hartree (CODATA 2018).
pub const EV_PER_HARTREE: f64 = 27.211_386_245_988;
/// Bohr radius in angstrom (CODATA 2018).
pub const ANGSTROM_PER_BOHR: f64 = 0.529_177_210_903;
/// Bohr per angstrom.
pub const BOHR_PER_ANGSTROM: f64 = 1.0 / ANGSTROM_PER_BOHR;

/// An energy unit a user may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnergyUnit {
    /// Hartree (`Ha`, `hartree`).
    Hartree,
    /// Rydberg (`Ry`, `rydberg`) = 0.5 Ha.
    Rydberg,
    /// Electron-volt (`eV`).
    ElectronVolt,
}

impl EnergyUnit {
    /// Parses a unit name, case-insensitively.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "ha" | "hartree" | "hartrees" => Some(EnergyUnit::Hartree),
            "ry" | "rydberg" | "rydbergs" => Some(EnergyUnit::Rydberg),
            "ev" => Some(EnergyUnit::ElectronVolt),
            _ => None,
        }
    }

    /// Converts `value` in this unit to Hartree.
    pub fn to_hartree(self, value: f64) -> f64 {
        match self {
            EnergyUnit::Hartree => value,
            EnergyUnit::Rydberg => value * HARTREE_PER_RYDBERG,
            EnergyUnit::ElectronVolt => value / EV_PER_HARTREE,
        }
    }
}

/// A length unit a user may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthUnit {
    /// Bohr (atomic unit of length).
    Bohr,
    /// Angstrom = 1/0.529177210903 bohr.
    Angstrom,
}

impl LengthUnit {
    /// Parses a unit name, case-insensitively (`bohr`, `au`, `angstrom`, `ang`, `a`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "bohr" | "au" | "a.u." => Some(LengthUnit::Bohr),
            "angstrom" | "angstroms" | "ang" | "a" | "å" => Some(LengthUnit::Angstrom),
            _ => None,
        }
    }

    /// Converts `value` in this unit to bohr.
    pub fn to_bohr(self, value: f64) -> f64 {
        match self {
            LengthUnit::Bohr => value,
            LengthUnit::Angstrom => value * BOHR_PER_ANGSTROM,
        }
    }
}

/// Parses an energy written as a string with a unit, e.g. `"30 Ry"`, `"0.27eV"`,
/// `"15 Ha"`, `"1e-2 Ry"`, and returns it in Hartree. A unit is required.
pub fn parse_energy(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let chars: Vec<(usize, char)> = t.char_indices().collect();
    let mut split = t.len();
    for (k, &(pos, c)) in chars.iter().enumerate() {
        if c.is_whitespace() {
            split = pos;
            break;
        }
        if c.is_alphabetic() {
            let next = chars.get(k + 1).map(|&(_, n)| n);
            let exponent = (c == 'e' || c == 'E')
                && k > 0
                && matches!(next, Some(n) if n.is_ascii_digit() || n == '+' || n == '-');
            if !exponent {
                split = pos;
                break;
            }
        }
    }
    let (num, unit) = t.split_at(split);
    let value: f64 = num.trim().parse().map_err(|_| {
        format!("`{text}` is not an energy: expected a number followed by a unit (Ha, Ry or eV)")
    })?;
    if !value.is_finite() {
        return Err(format!("`{text}` is not a finite energy"));
    }
    let unit = unit.trim();
    if unit.is_empty() {
        return Err(format!(
            "`{text}` has no unit: write a bare number for Hartree, or add Ha, Ry or eV"
        ));
    }
    let u = EnergyUnit::parse(unit)
        .ok_or_else(|| format!("unknown energy unit `{unit}` in `{text}` (use Ha, Ry or eV)"))?;
    Ok(u.to_hartree(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn energies() {
        assert!(close(parse_energy("30 Ry").unwrap(), 15.0));
        assert!(close(parse_energy("30Ry").unwrap(), 15.0));
        assert!(close(parse_energy("15 Ha").unwrap(), 15.0));
        assert!(close(parse_energy("15 hartree").unwrap(), 15.0));
        assert!(close(parse_energy("27.211386245988 eV").unwrap(), 1.0));
        assert!(close(
            parse_energy("0.27eV").unwrap(),
            0.27 / EV_PER_HARTREE
        ));
        assert!(close(parse_energy("1e-2Ry").unwrap(), 0.005));
        assert!(close(parse_energy("2E+1 ry").unwrap(), 10.0));
        assert!(close(
            parse_energy("408 eV").unwrap(),
            408.0 / 27.211386245988
        ));
        assert!(parse_energy("15").is_err());
        assert!(parse_energy("15 kcal").is_err());
        assert!(parse_energy("Ry").is_err());
        assert!(parse_energy("").is_err());
        assert!(parse_energy("nan Ry").is_err());
        assert!(parse_energy("inf Ha").is_err());
    }

    #[test]
    fn lengths() {
        assert!(close(LengthUnit::Angstrom.to_bohr(0.529177210903), 1.0));
        assert!(close(LengthUnit::Angstrom.to_bohr(1.0), 1.889726124626));
        assert_eq!(LengthUnit::parse("Angstrom"), Some(LengthUnit::Angstrom));
        assert_eq!(LengthUnit::parse("BOHR"), Some(LengthUnit::Bohr));
        assert_eq!(LengthUnit::parse("furlong"), None);
        assert!(close(EnergyUnit::Rydberg.to_hartree(2.0), 1.0));
    }
}
