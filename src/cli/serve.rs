//! `arena serve`: the web app over a store (see `arena::serve`): tournaments, leaderboards,
//! paged games and the viewer, updated live while `arena run` writes the store.

use std::{net::SocketAddr, path::PathBuf, sync::Arc};

use anyhow::{Context, Result, bail};
use arena::{
    serve::{self, App, Config},
    store::Store,
};

use super::common::format_tables;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
    db: PathBuf,
    /// The address to listen on. Anything but loopback needs a token (`--token` or
    /// `--new-token`).
    #[arg(long, default_value = "127.0.0.1:8700")]
    listen: SocketAddr,
    /// The token every request must then carry (env `ARENA_SERVE_TOKEN`).
    #[arg(long, env = "ARENA_SERVE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Make up a token and print the address to open with it.
    #[arg(long, conflicts_with = "token")]
    new_token: bool,
    /// Games per page of a games list.
    #[arg(long, default_value_t = 100)]
    page_size: u32,
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let Args {
        db,
        listen,
        token,
        new_token,
        page_size,
    } = args;
    let token = if new_token {
        Some(serve::new_token())
    } else {
        token.filter(|t| !t.is_empty())
    };
    if !serve::is_loopback(&listen) && token.is_none() {
        bail!(
            "`--listen {listen}` is reachable from other machines: give it a token (`--token TOKEN` or `--new-token`), or listen on 127.0.0.1"
        );
    }
    if page_size == 0 {
        bail!("`--page-size` must be at least 1");
    }
    if !arena::store::location_exists(&db) {
        bail!("no store at `{}`", arena::store::display_location(&db));
    }
    let store = Store::open_read_only(&db)?;
    // A person's moves are the only writes: a connection of their own, and a token that every
    // write carries even on loopback (the read token when there is one, else a new one).
    let writer = match Store::open(&db) {
        Ok(writer) => Some(Arc::new(writer)),
        Err(e) => {
            eprintln!(
                "arena serve: people cannot play here, the store does not open for writing: {e}"
            );
            None
        }
    };
    let write_token = writer
        .as_ref()
        .map(|_| token.clone().unwrap_or_else(serve::new_token));
    let config = Config {
        token: token.clone(),
        page_size,
        format_tables: Some(Arc::new(format_tables)),
        write_token: write_token.clone(),
        writer,
        ..Config::default()
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let bound = listener.local_addr()?;
    let query = token.map(|t| format!("/?token={t}")).unwrap_or_default();
    println!(
        "arena serve: {} on http://{bound}{query}",
        arena::store::display_location(&db)
    );
    if let Some(write) = write_token {
        // The address with the play token, for the person at this terminal only: it is printed
        // here once, never logged or stored.
        println!("arena serve: play your games on http://{bound}/play?token={write}");
    }
    serve::serve(listener, App::new(store, config)).await?;
    Ok(0)
}
