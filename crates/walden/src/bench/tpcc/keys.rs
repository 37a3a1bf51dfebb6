//! TPC-C's keying: the non-uniform random customer and item ids and last names (clause
//! 2.1.6), the mix of transactions (clause 5.2.3) and each transaction's input (clauses 2.4.1,
//! 2.5.1, 2.6.1, 2.7.1, 2.8.1).

use super::super::Rng;

/// The syllables of a customer's last name (clause 4.3.2.3).
const SYLLABLES: [&str; 10] =
    ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

/// The last name of number `n` (0 to 999): its three digits' syllables.
pub fn last_name(n: u32) -> String {
    let digits = [n / 100 % 10, n / 10 % 10, n % 10];
    digits.iter().map(|&d| SYLLABLES[d as usize]).collect()
}

/// The run's constants and sizes.
#[derive(Debug, Clone, Copy)]
pub struct Keys {
    /// Items (and stock rows per warehouse): 100,000 in the specification.
    pub items: u32,
    /// Customers per district (and orders per district at load): 3,000.
    pub customers: u32,
    /// Warehouses.
    pub warehouses: u32,
    /// NURand's C for last names at load, for last names in the run, customer ids and item
    /// ids (clause 2.1.6.1).
    c_last_load: u32,
    c_last_run: u32,
    c_id: u32,
    ol_i_id: u32,
}

impl Keys {
    /// Picks the run's constants; the run's C for last names differs from the load's by the
    /// amount clause 2.1.6.1 requires (65 to 119, but not 96 or 112).
    pub fn new(rng: &mut Rng, warehouses: u32, items: u32, customers: u32) -> Keys {
        let c_last_load = rng.range(0, 255);
        let delta = loop {
            let delta = rng.range(65, 119);
            if delta != 96 && delta != 112 {
                break delta;
            }
        };
        Keys {
            items,
            customers,
            warehouses,
            c_last_load,
            c_last_run: (c_last_load + delta) % 256,
            c_id: rng.range(0, 1023),
            ol_i_id: rng.range(0, 8191),
        }
    }

    /// NURand(A, x, y) with the C that belongs to `a` (the load's C for last names).
    pub fn nurand(&self, rng: &mut Rng, a: u32, x: u32, y: u32) -> u32 {
        let c = match a {
            255 => self.c_last_load,
            1023 => self.c_id,
            _ => self.ol_i_id,
        };
        nurand(rng, a, x, y, c)
    }

    fn customer_id(&self, rng: &mut Rng) -> u32 {
        nurand(rng, 1023, 1, self.customers, self.c_id)
    }

    /// A last name for a lookup: one that exists (the first thousand customers of every
    /// district have them all; fewer customers have fewer names).
    fn customer_name(&self, rng: &mut Rng) -> String {
        let top = self.customers.min(1000) - 1;
        last_name(nurand(rng, 255, 0, top, self.c_last_run))
    }

    /// A customer by id (40%) or by last name (60%), clauses 2.5.1.2 and 2.6.1.2.
    fn customer(&self, rng: &mut Rng) -> Customer {
        if rng.range(1, 100) <= 60 {
            Customer::ByName(self.customer_name(rng))
        } else {
            Customer::ById(self.customer_id(rng))
        }
    }

    /// Another warehouse than `w` when there is one.
    fn other_warehouse(&self, rng: &mut Rng, w: u32) -> u32 {
        if self.warehouses == 1 {
            return w;
        }
        let other = rng.range(1, self.warehouses - 1);
        if other >= w {
            other + 1
        } else {
            other
        }
    }

    /// The next transaction of a terminal whose home is warehouse `w`: the mix of clause
    /// 5.2.3 at its minimums (43% Payment, 4% each of Order-Status, Delivery and
    /// Stock-Level) with New-Order taking the rest (45%).
    pub fn next(&self, rng: &mut Rng, w: u32) -> Input {
        let d = rng.range(1, 10);
        match rng.range(1, 100) {
            1..=45 => {
                let count = rng.range(5, 15);
                // 1% of New-Orders name an unused item last and are rolled back.
                let rollback = rng.range(1, 100) == 1;
                let mut lines: Vec<Line> = (0..count)
                    .map(|_| {
                        let supply =
                            if rng.range(1, 100) == 1 { self.other_warehouse(rng, w) } else { w };
                        Line {
                            item: nurand(rng, 8191, 1, self.items, self.ol_i_id),
                            supply,
                            quantity: rng.range(1, 10),
                        }
                    })
                    .collect();
                // Stock rows are updated in key order, so that two New-Orders sharing items
                // wait for each other instead of deadlocking (the order of the lines is the
                // terminal's to choose).
                lines.sort_by_key(|l| (l.supply, l.item));
                if rollback {
                    if let Some(last) = lines.last_mut() {
                        last.item = self.items + 1;
                    }
                }
                Input::NewOrder { w, d, c: self.customer_id(rng), lines }
            }
            46..=88 => {
                // 85% pay at their home warehouse, 15% at another (clause 2.5.1.2).
                let (c_w, c_d) = if rng.range(1, 100) <= 85 || self.warehouses == 1 {
                    (w, d)
                } else {
                    (self.other_warehouse(rng, w), rng.range(1, 10))
                };
                Input::Payment {
                    w,
                    d,
                    c_w,
                    c_d,
                    customer: self.customer(rng),
                    cents: rng.range(100, 500_000),
                }
            }
            89..=92 => Input::OrderStatus { w, d, customer: self.customer(rng) },
            93..=96 => Input::Delivery { w, carrier: rng.range(1, 10) },
            _ => Input::StockLevel { w, d, threshold: rng.range(10, 20) },
        }
    }
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
fn nurand(rng: &mut Rng, a: u32, x: u32, y: u32, c: u32) -> u32 {
    (((rng.range(0, a) | rng.range(x, y)) + c) % (y - x + 1)) + x
}

/// How a transaction names its customer.
#[derive(Debug, Clone)]
pub enum Customer {
    ById(u32),
    ByName(String),
}

/// One order line of a New-Order.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    pub item: u32,
    pub supply: u32,
    pub quantity: u32,
}

/// One transaction's input.
#[derive(Debug, Clone)]
pub enum Input {
    NewOrder { w: u32, d: u32, c: u32, lines: Vec<Line> },
    Payment { w: u32, d: u32, c_w: u32, c_d: u32, customer: Customer, cents: u32 },
    OrderStatus { w: u32, d: u32, customer: Customer },
    Delivery { w: u32, carrier: u32 },
    StockLevel { w: u32, d: u32, threshold: u32 },
}

/// The five transactions, in the order the report lists them.
pub const KINDS: [&str; 5] = ["New-Order", "Payment", "Order-Status", "Delivery", "Stock-Level"];

impl Input {
    /// This transaction's index in [`KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            Input::NewOrder { .. } => 0,
            Input::Payment { .. } => 1,
            Input::OrderStatus { .. } => 2,
            Input::Delivery { .. } => 3,
            Input::StockLevel { .. } => 4,
        }
    }

    /// Whether this is a New-Order that must roll back (its last item is unused).
    pub fn rolls_back(&self, keys: &Keys) -> bool {
        match self {
            Input::NewOrder { lines, .. } => lines.iter().any(|l| l.item > keys.items),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_run_c_differs_from_load_c() {
        let mut rng = Rng(7);
        let keys = Keys::new(&mut rng, 2, 100_000, 3000);
        let delta = (keys.c_last_run + 256 - keys.c_last_load) % 256;
        assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
        for _ in 0..10_000 {
            let id = keys.customer_id(&mut rng);
            assert!((1..=3000).contains(&id));
            assert!(keys.other_warehouse(&mut rng, 2) == 1);
        }
    }
}
