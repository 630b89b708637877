//! The `tables` binary: parses the command line and runs it (see the `tables_cli`
//! library for the commands and exit codes).

use std::process::ExitCode;

use tables_cli::{cli, run, ConnectionStrings};

#[tokio::main]
async fn main() -> ExitCode {
    let matches = cli().get_matches();
    match run(&matches, &ConnectionStrings).await {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) ends the output, not in failure.
        Err(failure) if failure.message.contains("Broken pipe") => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("tables: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
