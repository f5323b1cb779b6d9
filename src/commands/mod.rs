//! One module per subcommand, the clap arguments they share and their bounds, how they
//! write to stdout and how their results become exit statuses.

pub mod asm;
pub mod bounds;
pub mod dap;
pub mod deadlines;
pub mod debug;
pub mod diff;
pub mod diff_json;
pub mod diff_locate;
pub mod docs;
pub mod fuzz;
pub mod gen;
pub mod history;
pub mod includes;
pub mod json_out;
pub mod machine_args;
pub mod memory_args;
pub mod outputs;
pub mod parts;
pub mod run;
pub mod see_args;
pub mod serve;
pub mod status;
pub mod stdout;
pub mod value_enums;

pub use status::{CliError, Finished};
pub use stdout::emit;
