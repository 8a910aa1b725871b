//! The names a notebook uses, in one import (`use gpukit_ml::prelude::*;`, which
//! `%crate gpukit-ml` runs): the models, the split, the scaler, the metrics, and the `datasets`
//! module for the generators.

pub use crate::cluster::{KMeans, KMeansInit};
pub use crate::datasets;
pub use crate::decomposition::PCA;
pub use crate::error::MlError;
pub use crate::linear_model::{LinearRegression, LogisticRegression, Ridge};
pub use crate::metrics::{accuracy_score, confusion_matrix, r2_score};
pub use crate::model_selection::{train_test_split, SplitOptions, TestSize};
pub use crate::neighbors::{KNeighborsClassifier, KNeighborsRegressor, Metric, Weights};
pub use crate::preprocessing::StandardScaler;
