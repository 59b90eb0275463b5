//! `trae-mem config`: the settings as documented, as in effect here, and
//! the files they come from.

use anyhow::Result;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::{Env, output};
use trae_mem::config::{self, Layers, Overrides};

/// Show trae-mem's settings: every default, those in effect here, and where they come from.
#[derive(Debug, Args)]
pub struct Cmd {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Print every setting with its default and what it does, as a trae-mem.toml to copy from.
    Default,
    /// Print the settings in effect here, each with where it came from: the default, the global
    /// file, the project's file, or the environment.
    Show {
        /// Print JSON: {"home": {value, from}, "settings": {table: {key: {value, from}}}, "plugins": {value, from}}.
        #[arg(long)]
        json: bool,
    },
    /// List the config files read here, global first.
    Path {
        /// Print JSON: [{"scope", "path"}].
        #[arg(long)]
        json: bool,
    },
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        match self.action {
            Action::Default => {
                print!("{}", config::DEFAULTS);
                Ok(())
            }
            Action::Show { json } => show(env, json),
            Action::Path { json } => path(env, json),
        }
    }
}

/// Where a setting's value comes from.
fn source(layers: &Layers, overrides: &Overrides, table: &str, key: &str) -> String {
    if let Some(variable) = overrides.source(table, key) {
        return variable.to_owned();
    }
    let holds = |layer: &Option<(std::path::PathBuf, toml::Table)>| {
        layer
            .as_ref()
            .filter(|(_, t)| t.get(table).and_then(|t| t.get(key)).is_some())
            .map(|(p, _)| p.display().to_string())
    };
    if let Some(file) = holds(&layers.project) {
        return format!("project {file}");
    }
    if let Some(file) = holds(&layers.global) {
        return format!("global {file}");
    }
    "default".to_owned()
}

/// Where the plugin list comes from: each file's plugins are used together.
fn plugins_source(layers: &Layers) -> String {
    let files: Vec<String> = [&layers.global, &layers.project]
        .into_iter()
        .flatten()
        .filter(|(_, t)| t.contains_key("plugins"))
        .map(|(p, _)| p.display().to_string())
        .collect();
    if files.is_empty() { "default".to_owned() } else { files.join(" and ") }
}

fn show(env: &Env, as_json: bool) -> Result<()> {
    // Read once: the layers say where each setting comes from.
    let read = config::layers(&env.cwd, env.home.as_deref())
        .and_then(|layers| Ok((config::load_layers(layers.clone())?, layers)));
    let (loaded, layers) = match read {
        Ok(read) => read,
        // What is in effect while a file is broken is what hooks use: the
        // defaults. Say so in one line, and show them.
        Err(_) => {
            let (loaded, broken) = config::load_or_defaults(&env.cwd, env.home.as_deref())?;
            if let Some(warning) = broken {
                eprintln!("trae-mem: warning: {warning}");
            }
            let layers =
                Layers { home: loaded.home.clone(), home_from: loaded.home_from.clone(), global: None, project: None };
            (loaded, layers)
        }
    };
    let mut effective = toml::Table::try_from(&loaded.config)?;
    let plugins = effective.remove("plugins");
    let home = loaded.home.display().to_string();
    if as_json {
        let settings: serde_json::Map<String, Value> = effective
            .iter()
            .filter_map(|(table, keys)| keys.as_table().map(|keys| (table, keys)))
            .map(|(table, keys)| {
                let keys = keys
                    .iter()
                    .map(|(key, value)| {
                        (key.clone(), json!({"value": value, "from": source(&layers, &loaded.overrides, table, key)}))
                    })
                    .collect::<serde_json::Map<_, _>>();
                (table.clone(), Value::Object(keys))
            })
            .collect();
        return output::json(&json!({
            "home": {"value": home, "from": loaded.home_from.to_string()},
            "settings": settings,
            "plugins": {"value": plugins, "from": plugins_source(&layers)},
        }));
    }
    println!("# The settings in effect in {}, each with where it comes from.", env.cwd.display());
    println!("home = {:?}  # {}", home, loaded.home_from);
    for (table, keys) in effective.iter().filter_map(|(table, keys)| keys.as_table().map(|keys| (table, keys))) {
        println!("\n[{table}]");
        for (key, value) in keys {
            println!("{key} = {value}  # {}", source(&layers, &loaded.overrides, table, key));
        }
    }
    if let Some(plugins) = plugins.filter(|p| p.as_array().is_some_and(|a| !a.is_empty())) {
        println!("\n# plugins, from {}", plugins_source(&layers));
        print!("{}", toml::to_string(&toml::Table::from_iter([("plugins".to_owned(), plugins)]))?);
    }
    Ok(())
}

fn path(env: &Env, as_json: bool) -> Result<()> {
    let layers = config::layers(&env.cwd, env.home.as_deref())?;
    let files: Vec<(&str, String)> = [("global", &layers.global), ("project", &layers.project)]
        .into_iter()
        .filter_map(|(scope, layer)| layer.as_ref().map(|(path, _)| (scope, path.display().to_string())))
        .collect();
    if as_json {
        return output::json(
            &files.iter().map(|(scope, path)| json!({"scope": scope, "path": path})).collect::<Vec<_>>(),
        );
    }
    if files.is_empty() {
        println!(
            "no config file: the defaults apply (a trae-mem.toml here or above, or {}, would be read)",
            layers.home.join("trae-mem.toml").display()
        );
    }
    for (scope, path) in files {
        println!("{scope:<8} {path}");
    }
    Ok(())
}
