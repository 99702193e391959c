//! planewave-core: the physics of plane-wave Kohn–Sham DFT.
