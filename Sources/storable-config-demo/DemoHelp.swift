/// The demo's help texts.
enum DemoHelp {
    static let general = """
        storable-config-demo: look at and edit the StorableConfig demo's settings.

        usage: storable-config-demo [<command>] [--store <path.json>]

        With no command, simulates an app launch: says whether this is the first launch, records the launch,
        and shows the settings and where they are stored.

        commands:
          list [--json]                     every setting: value, default, whether it is set, storage key
          get <config>.<setting>            print one value alone, e.g. for $(...) in a shell
          set <config>.<setting> <value>    parse the value as the setting's type and store it
          reset [<config>[.<setting>]]      back to defaults: everything, one config, or one setting
          export [<config>...]              print the stored values as a settings document (JSON);
                                            secrets only with --include-secrets
          import [--replace] <file>         apply a settings document (- reads standard input)
          schema                            print a JSON Schema of the settings file, for editors
          appconfig-spec [<config>...] [--bundle-id <id>]
                                            print the AppConfig specification file (specfile.xml) of
                                            the named configs, or of all, for an MDM console
          watch                             print each change as it happens, until stopped
          history <config>.<setting> [--limit N]
                                            earlier values an etcd store still keeps, newest first,
                                            one line each: revision and value (10 by default)
          rollback <config>.<setting> <revision> [--if-unchanged-since <revision>]
                                            set the value the setting had at that revision (etcd),
                                            unless the key changed after the revision history showed
          sync                              with --cloud: merge with the cloud, print the synced settings
                                            and the device each value came from
          help [<command>]                  this text, or one command's with examples

        configs: app, twitter, facebook, budget (records: budget.incomes)
        app.volume must lie in 0...1; twitter.apiToken is a secret: list, set and export show <redacted>, get
        prints it.

        options (before or after the command):
          --store <path.json>   use this JSON file instead of the default
                                ($XDG_CONFIG_HOME or ~/.config, then storable-config-demo/settings.json);
                                a leading ~ or ~/ is $HOME; colons are part of the name (./a:b.json)
          --store file:///path.json
                                the same, as a file URL
          --store etcd://host:port[,host:port...][/prefix/]
                                use an etcd cluster; the path is the keys' prefix. Credentials come from
                                STORABLE_CONFIG_ETCD_USER and STORABLE_CONFIG_ETCD_PASSWORD; a password is
                                not sent over etcd:// to another machine unless
                                STORABLE_CONFIG_ETCD_ALLOW_PLAIN_PASSWORD=1; with
                                STORABLE_CONFIG_ETCD_SNAPSHOT=<file> it keeps a last-known-good copy there
                                (mode 0600) and reads it while no member answers (writes still fail)
          --store etcds://host:port[,host:port...][/prefix/]
                                the same over https: the CA, client certificate and key files (PEM) come
                                from STORABLE_CONFIG_ETCD_CACERT, STORABLE_CONFIG_ETCD_CERT and
                                STORABLE_CONFIG_ETCD_KEY (without a CA file, the system's CAs), or the
                                client certificate and key as PKCS#12 from STORABLE_CONFIG_ETCD_PKCS12
                                (its password in STORABLE_CONFIG_ETCD_PKCS12_PASSWORD)
                                (any other scheme://, such as http:// or redis://, is refused: exit 2)
          --read <path>         read settings from a file the demo never writes, below the store: a JSON
                                file (a settings document, as export prints, or keys and values), a .env
                                file (a name ending .env: APP_CONFIG_USER_NAME=x lines), or a directory of
                                one file per setting (a Kubernetes ConfigMap: a file APP_CONFIG_USER_NAME,
                                or storable-config-demo.AppConfig.userName, holding the value). Its values
                                replace the defaults; a stored value wins over them (reset to read them).
                                Watched: watch prints a change to it. Repeatable; a path that does not exist
                                exits 1
          --read-over <path>    the same, above the store: its values win over stored ones. Values read
                                from files are shown as they are, except those of settings declared
                                secret (twitter.apiToken): the demo declares no file secret
                                Order, highest first: launch arguments, environment variables, --read-over,
                                the store, --read, the default; among flags of one kind, a later one wins
          --cloud <directory>   be one of a user's devices, syncing through a simulated iCloud: the
                                directory holds the cloud's values, one file per key, shared by every
                                device (every run with the same --cloud). The app's settings but its
                                launch record, twitter.userName, facebook and budget sync; the later
                                write wins, per key and per record, and a reset reaches every device
          --device <name>       with --cloud: this device's name; its settings file is then
                                devices/<name>/settings.json beside the default one (unless --store
                                names one)
          --offline             with --cloud: the cloud cannot be reached this run; changes are kept
                                and go up at the device's next run without --offline
          --<config>-config-<setting>=<value>
                                override a setting for this run, never stored (--app-config-user-name=x); the
                                value may also follow as the next argument unless it is a command or an option.
                                The environment does the same: APP_CONFIG_USER_NAME=x
          --help, -h            show help

        examples:
          storable-config-demo
          storable-config-demo set twitter.userName nkysu1
          storable-config-demo get twitter.userName
          storable-config-demo list --json --store /tmp/demo.json
          storable-config-demo list --read ./conf.d --read-over ./secrets --read dev.env
          storable-config-demo --cloud /tmp/cloud --device A set app.userName ann

        Values show as set takes them: text as it is, no value (an optional's nil) as null, and text that would
        read back as something else (a control character, the text "null") as a quoted JSON string.

        exit status: 0 success, 1 failure (the store or a document cannot be read or written), 2 usage error
        (or a document that cannot be used).
        """

    static func command(_ name: String) -> String {
        switch name {
        case "list":
            return """
                usage: storable-config-demo list [--json] [--store <path.json>]

                Lists every setting of every config: its short name, value, default, whether a value is stored
                (yes) or the default is in use (no), and its full storage key. With --json, prints one JSON
                object mapping short names to values (budget.incomes: the array of records, as get prints it),
                for scripts.

                examples:
                  storable-config-demo list
                  storable-config-demo list --json
                """
        case "get":
            return """
                usage: storable-config-demo get <config>.<setting> [--store <path.json>]

                Prints the setting's value alone on one line: text as it is (nkysu1), numbers and Booleans as
                they are (true, 0.8), arrays and structures as compact JSON (["sleep","eat"]), no value as null.
                Text that would read back as something else is a quoted JSON string: "null" for the text null,
                "a\\nb" for text with a line break (control characters are never printed as they are).

                examples:
                  storable-config-demo get app.isFirstLaunch
                  name=$(storable-config-demo get twitter.userName)
                """
        case "set":
            return """
                usage: storable-config-demo set <config>.<setting> <value> [--store <path.json>]

                Parses the value as the setting's type and stores it: true or false for a Boolean, numbers as
                numbers, a case name for an enumeration, JSON for arrays and structures, null to clear an
                optional, a quoted JSON string for text that would otherwise read as something else ('"null"').
                A value that does not parse changes nothing and names the type expected (exit 2). The argument
                after <config>.<setting> is always the value, even -h or --json; only -- comes before it.

                budget.incomes takes a JSON array of records and replaces the records that are stored: each id
                once (an id given twice is refused, exit 2). If the stored value is not a dictionary of records,
                it is kept and nothing is changed (exit 1): reset budget.incomes removes it.

                examples:
                  storable-config-demo set twitter.userName nkysu1
                  storable-config-demo set app.selectedHobbies '["sleep","eat"]'
                  storable-config-demo set app.theme dark
                  storable-config-demo set app.window '{"width": 1024, "height": 768}'
                  storable-config-demo set app.nickname null
                  storable-config-demo set budget.incomes '[{"id":"s","name":"Salary","amount":300000,"order":0}]'
                  storable-config-demo set twitter.userName -- -dash-first-name
                """
        case "reset":
            return """
                usage: storable-config-demo reset [<config>[.<setting>]] [--store <path.json>]

                Removes stored values so that settings read their defaults again: every setting, those of one
                config, or one setting. Keys that the demo does not declare are left alone.

                examples:
                  storable-config-demo reset app.userName
                  storable-config-demo reset twitter
                  storable-config-demo reset
                """
        case "export":
            return """
                usage: storable-config-demo export [<config>...] [--include-secrets] [--store <path.json>]

                Prints the stored values (not defaults) of the named configs, or of all, as one settings
                document: JSON naming each config, its schema version, and its stored settings by name. Every
                config named is in the document, even one with nothing stored. Secret settings
                (twitter.apiToken) are left out, and listed as left out, unless --include-secrets is given;
                importing such a document leaves them alone.

                examples:
                  storable-config-demo export > backup.json
                  storable-config-demo export app twitter
                """
        case "schema":
            return """
                usage: storable-config-demo schema

                Prints a JSON Schema (draft 2020-12) of the settings file: each key with its type, default,
                range and allowed values; secrets marked writeOnly. Point an editor at it to complete and check
                hand edits of settings.json, or check a file with any JSON Schema validator.

                examples:
                  storable-config-demo schema > settings.schema.json
                """
        case "appconfig-spec":
            return """
                usage: storable-config-demo appconfig-spec [<config>...] [--bundle-id <id>]

                Prints the AppConfig specification file (specfile.xml) of the named configs, or of all: each
                setting an administrator may set through MDM managed app configuration, named
                <ConfigName>.<setting> (AppConfig.volume), with its type, default, allowed values, label and
                description. An MDM console reads it to offer exactly these settings. Secrets, and settings
                whose type the format cannot express (app.window, budget.incomes), are left out: a comment in
                the file and a line on standard error say which, and why. --bundle-id names the app
                (com.example.StorableConfigDemo by default).

                examples:
                  storable-config-demo appconfig-spec > specfile.xml
                  storable-config-demo appconfig-spec app --bundle-id com.example.app
                """
        case "import":
            return """
                usage: storable-config-demo import [--replace] <file> [--store <path.json>]

                Applies a settings document, all or nothing, in one write. Settings the document does not set
                keep their values, or with --replace go back to their defaults (for the configs the document
                covers). A document that cannot be read (exit 1) or used (exit 2: not a settings document, an
                unknown config or setting, a value of the wrong type) changes nothing, and every problem is
                named. - reads the document from standard input.

                examples:
                  storable-config-demo import backup.json
                  storable-config-demo export | storable-config-demo import --replace - --store /tmp/copy.json
                """
        case "history":
            return """
                usage: storable-config-demo history <config>.<setting> [--limit N] --store etcd://...

                Prints the values that the etcd cluster still keeps for the setting, newest first, one line
                each: the revision of the change that wrote it (etcd's mod_revision) and the value, as get
                prints it (<redacted> for a secret). The first line is the value the key holds now. The list
                ends after N lines (10 by default), where the key was created, or where the cluster compacted
                its history. A stored value that is not of the setting's type shows as its JSON text, marked.
                A last line gives the revision the key is at now, for rollback --if-unchanged-since. A JSON
                file keeps no history: exit 1.

                examples:
                  storable-config-demo history app.volume --store etcd://127.0.0.1:2379/fleet/
                  storable-config-demo history app.volume --limit 3 --store etcd://127.0.0.1:2379/fleet/
                """
        case "rollback":
            return """
                usage: storable-config-demo rollback <config>.<setting> <revision>
                           [--if-unchanged-since <revision>] --store etcd://...

                Sets the value the setting's key had at the revision (as history prints them): an ordinary
                assignment, checked like set's (app.volume must lie in 0...1), written in a transaction that
                compares the key's revision. With --if-unchanged-since, the revision history said the key is
                at: refused if the key changed after it, so a change that landed after you read history is
                never undone. Without it, the revision the key is at when rollback starts: only a change
                that lands while rollback runs is safe.
                Exit 1, saying which, if the cluster compacted the revision away, the key changed after the
                revision compared (naming the key and both revisions), the key held no value then, or the
                value is not valid now. A JSON file keeps no history: exit 1.

                examples:
                  storable-config-demo history app.volume --store etcd://127.0.0.1:2379/fleet/
                  storable-config-demo rollback app.volume 17 --if-unchanged-since 42 \\
                      --store etcd://127.0.0.1:2379/fleet/
                """
        case "sync":
            return """
                usage: storable-config-demo sync --cloud <directory> [--device <name>] [--offline]

                Merges this device's synced settings with the simulated cloud in the directory, then
                prints each: its value ((default) when nothing is stored) and where it came from
                (simulated iCloud (device "B") when this run took it from another device). Every
                command with --cloud merges first; sync only shows it. With --offline nothing is
                exchanged: any command's writes are stamped in the device's settings file and go up at
                its next run without --offline, where the later write wins.

                examples:
                  storable-config-demo --cloud /tmp/cloud --device A --offline set app.userName ann
                  storable-config-demo --cloud /tmp/cloud --device B --offline set app.userName bob
                  storable-config-demo --cloud /tmp/cloud --device A sync     # ann goes up
                  storable-config-demo --cloud /tmp/cloud --device B sync     # bob, written later, wins
                  storable-config-demo --cloud /tmp/cloud --device A sync     # A takes bob
                """
        default:
            return general
        }
    }
}
