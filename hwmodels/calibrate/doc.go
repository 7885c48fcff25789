// Package calibrate fits the hardware models' parameters to measured job
// profiles (nvml.Profile, from `schedsim probe --run`): the runtime
// model's speed ratios between GPU models per job class, and the energy
// model's idle and busy power per GPU model. Apply puts a calibration into
// a resolved cluster, replacing the catalog's datasheet defaults.
//
// Speed ratios. Per job class, every profile p of workload w on GPU model
// g gives ln T_p = a_w − θ_g + ε_p: a workload's size a_w and a GPU
// model's log speed θ_g, with θ of the first model (by name) fixed at 0.
// Weighted least squares on ln T (QR, gonum/mat) estimates them; with
// Robust, iteratively reweighted least squares with Huber weights
// (c = 1.345 × the residuals' MAD scale) limits the pull of outliers. The
// speed ratio from A to B is exp(θ_B − θ_A): how many times faster the
// class runs on B, as the cluster spec's runtime.ratios says it. Models
// that share no workload (directly or through other models) with the
// largest connected group cannot be compared and are left out, with a
// note. Goodness of fit: residual RMS of ln T (≈ relative error), the
// largest relative error, R² of ln T, and each ratio's relative standard
// error when there are more profiles than parameters.
//
// Power. Per GPU model, the profiles' mean power per GPU against mean
// utilization (and their idle baselines at 0 %) fit P = idle + (full −
// idle) × u by the same least squares; idle_w is the intercept (or the
// mean idle baseline when utilization does not vary), busy_w the mean
// power of the measured jobs weighted by their wall time, which is what
// the energy model charges a GPU running a job (hwmodels/energy.go), and
// full_util_w the fitted draw at 100 %. Goodness: R² and RMS in watts.
package calibrate
