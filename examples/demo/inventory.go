package demo

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
)

// Inventory: the physical products the business sells, with stock levels.
// A product is low on stock when it is at or below its reorder level.

var (
	productCategories = []string{"hardware", "accessories", "networking", "furniture"}
	stockReasons      = []string{"restock", "sale", "return", "damaged", "correction"}
)

type productView struct {
	ID           string `json:"id" jsonschema:"Product id, e.g. prd_001"`
	SKU          string `json:"sku" jsonschema:"Stock keeping unit, e.g. HW-1001"`
	Name         string `json:"name" jsonschema:"Product name"`
	Category     string `json:"category" enum:"productCategories" jsonschema:"Product category"`
	PriceCents   int64  `json:"price_cents" jsonschema:"List price in US cents"`
	Stock        int    `json:"stock" jsonschema:"Units on hand"`
	ReorderLevel int    `json:"reorder_level" jsonschema:"Stock at or below which the product should be reordered"`
	LowStock     bool   `json:"low_stock" jsonschema:"True when stock is at or below the reorder level"`
	UpdatedAt    string `json:"updated_at" jsonschema:"Last change to price or stock (RFC 3339)"`
}

type productList struct {
	Products   []productView `json:"products" jsonschema:"Matching products ordered by id"`
	Total      int           `json:"total" jsonschema:"Number of products matching the filters"`
	NextOffset *int          `json:"next_offset,omitempty" jsonschema:"Offset of the next page; absent on the last page"`
}

type stockAdjustment struct {
	ProductID     string `json:"product_id" jsonschema:"Product that was adjusted"`
	SKU           string `json:"sku" jsonschema:"Its stock keeping unit"`
	PreviousStock int    `json:"previous_stock" jsonschema:"Units on hand before the adjustment"`
	Delta         int    `json:"delta" jsonschema:"Units added (positive) or removed (negative)"`
	Stock         int    `json:"stock" jsonschema:"Units on hand after the adjustment"`
	Reason        string `json:"reason" enum:"stockReasons" jsonschema:"Why the stock changed"`
	LowStock      bool   `json:"low_stock" jsonschema:"True when the new stock is at or below the reorder level"`
	AdjustedAt    string `json:"adjusted_at" jsonschema:"When the adjustment was made (RFC 3339)"`
}

type priceChange struct {
	Product            productView `json:"product" jsonschema:"The product with its new price"`
	PreviousPriceCents int64       `json:"previous_price_cents" jsonschema:"List price before the change, in US cents"`
}

type reorderLine struct {
	productView
	Shortfall           int `json:"shortfall" jsonschema:"Units missing to reach the reorder level (0 when stock equals it)"`
	SuggestedReorderQty int `json:"suggested_reorder_qty" jsonschema:"Units to order to get back to twice the reorder level"`
}

type lowStockReport struct {
	Products []reorderLine `json:"products" jsonschema:"Products at or below their reorder level, most urgent (lowest stock relative to the reorder level) first"`
	Total    int           `json:"total" jsonschema:"Number of products in the report"`
}

func (p *product) lowStock() bool { return p.stock <= p.reorderLevel }

func (p *product) view() productView {
	return productView{ID: p.id, SKU: p.sku, Name: p.name, Category: p.category, PriceCents: p.priceCents,
		Stock: p.stock, ReorderLevel: p.reorderLevel, LowStock: p.lowStock(), UpdatedAt: stamp(p.updatedAt)}
}

func (s *store) inventoryTools() []server.ServerTool {
	productID := mcp.WithString("product_id", mcp.Required(),
		mcp.Description("Product id (prd_001) or SKU (HW-1001); inventory.list_products returns both."))
	return []server.ServerTool{
		{Tool: withMeta(newTool("inventory.list_products", "List products",
			"List products with price and stock, filtered by category, name or SKU text, or availability.",
			readOnly,
			join([]mcp.ToolOption{
				mcp.WithString("category", mcp.Description("Only products in this category."), mcp.Enum(productCategories...)),
				mcp.WithString("query", mcp.Description("Case-insensitive text matched against name and SKU."), mcp.MaxLength(200)),
				mcp.WithBoolean("in_stock", mcp.Description("true: only products with stock; false: only products that are sold out.")),
				withOutput[productList](),
			}, withPaging())...), catalog.Meta{Examples: []catalog.Example{
			example("Hardware that can ship today", map[string]any{"category": "hardware", "in_stock": true}),
		}}),
			Handler: handle(s, s.listProducts)},
		{Tool: withMeta(newTool("inventory.get_product", "Get product",
			"Fetch one product by id or SKU.",
			readOnly, productID, withOutput[productView]()), catalog.Meta{Examples: []catalog.Example{
			example("A product by SKU", map[string]any{"product_id": "HW-1001"}),
		}}),
			Handler: handle(s, s.getProduct)},
		{Tool: withMeta(newTool("inventory.adjust_stock", "Adjust stock",
			"Add or remove units of a product, e.g. after a delivery or a write-off. Stock cannot go below zero.",
			additive, productID,
			mcp.WithInteger("delta", mcp.Required(), mcp.Description("Units to add (positive) or remove (negative); not zero."),
				mcp.Min(-10000), mcp.Max(10000)),
			mcp.WithString("reason", mcp.Required(), mcp.Description("Why the stock changes."), mcp.Enum(stockReasons...)),
			withOutput[stockAdjustment]()), catalog.Meta{Examples: []catalog.Example{
			example("A delivery of 50 mice", map[string]any{"product_id": "HW-1006", "delta": 50, "reason": "restock"}),
			example("Write off a damaged chair", map[string]any{"product_id": "FN-4001", "delta": -1, "reason": "damaged"}),
		}}),
			Handler: handle(s, s.adjustStock)},
		{Tool: withMeta(newTool("inventory.set_price", "Set product price",
			"Change a product's list price. Existing invoices keep the price they were issued with.",
			overwrite, productID,
			mcp.WithInteger("price_cents", mcp.Required(), mcp.Description("New list price in US cents."), mcp.Min(1), mcp.Max(10000000)),
			withOutput[priceChange]()), catalog.Meta{Examples: []catalog.Example{
			example("Raise the keyboard to $139.00", map[string]any{"product_id": "HW-1001", "price_cents": 13900}),
		}}),
			Handler: handle(s, s.setPrice)},
		{Tool: withMeta(newTool("inventory.low_stock_report", "Low stock report",
			"List every product at or below its reorder level with a suggested reorder quantity, most urgent first.",
			readOnly,
			mcp.WithString("category", mcp.Description("Only products in this category."), mcp.Enum(productCategories...)),
			withOutput[lowStockReport]()), catalog.Meta{Examples: []catalog.Example{
			example("Furniture to reorder", map[string]any{"category": "furniture"}),
		}}),
			Handler: handle(s, s.lowStockReport)},
	}
}

type listProductsArgs struct {
	Category string `json:"category"`
	Query    string `json:"query"`
	InStock  *bool  `json:"in_stock"`
	Limit    int    `json:"limit"`
	Offset   int    `json:"offset"`
}

func (s *store) listProducts(a listProductsArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	var matches []*product
	for _, p := range s.products {
		if (a.Category != "" && p.category != a.Category) ||
			(a.Query != "" && !contains(p.name, a.Query) && !contains(p.sku, a.Query)) ||
			(a.InStock != nil && *a.InStock != (p.stock > 0)) {
			continue
		}
		matches = append(matches, p)
	}
	from, to, next := page(len(matches), a.Offset, a.Limit)
	out := productList{Products: []productView{}, Total: len(matches), NextOffset: next}
	for _, p := range matches[from:to] {
		out.Products = append(out.Products, p.view())
	}
	return structured(out)
}

type productIDArgs struct {
	ProductID string `json:"product_id"`
}

func (s *store) getProduct(a productIDArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.product(a.ProductID)
	if p == nil {
		return notFound("product", a.ProductID, "inventory.list_products")
	}
	return structured(p.view())
}

type adjustArgs struct {
	ProductID string `json:"product_id"`
	Delta     int    `json:"delta"`
	Reason    string `json:"reason"`
}

func (s *store) adjustStock(a adjustArgs) *mcp.CallToolResult {
	if a.Delta == 0 {
		return failf("delta must not be zero: give a positive number to add units or a negative one to remove them")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.product(a.ProductID)
	if p == nil {
		return notFound("product", a.ProductID, "inventory.list_products")
	}
	if p.stock+a.Delta < 0 {
		return failf("cannot remove %d units of %s: only %d in stock; remove at most %d", -a.Delta, p.sku, p.stock, p.stock)
	}
	prev := p.stock
	p.stock += a.Delta
	p.updatedAt = s.now()
	return structured(stockAdjustment{ProductID: p.id, SKU: p.sku, PreviousStock: prev, Delta: a.Delta, Stock: p.stock,
		Reason: a.Reason, LowStock: p.lowStock(), AdjustedAt: stamp(p.updatedAt)})
}

type priceArgs struct {
	ProductID  string `json:"product_id"`
	PriceCents int64  `json:"price_cents"`
}

func (s *store) setPrice(a priceArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.product(a.ProductID)
	if p == nil {
		return notFound("product", a.ProductID, "inventory.list_products")
	}
	prev := p.priceCents
	if prev != a.PriceCents {
		p.priceCents, p.updatedAt = a.PriceCents, s.now()
	}
	return structured(priceChange{Product: p.view(), PreviousPriceCents: prev})
}

type lowStockArgs struct {
	Category string `json:"category"`
}

func (s *store) lowStockReport(a lowStockArgs) *mcp.CallToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := []reorderLine{}
	for _, p := range s.products {
		if !p.lowStock() || (a.Category != "" && !strings.EqualFold(p.category, a.Category)) {
			continue
		}
		// Reorder up to twice the reorder level, a common rule of thumb
		// that leaves a buffer until the next delivery.
		rows = append(rows, reorderLine{p.view(), p.reorderLevel - p.stock, 2*p.reorderLevel - p.stock})
	}
	// Most urgent first: the largest shortfall relative to the reorder level.
	slices.SortStableFunc(rows, func(x, y reorderLine) int {
		return cmp.Compare(x.Stock*y.ReorderLevel, y.Stock*x.ReorderLevel)
	})
	return structured(lowStockReport{Products: rows, Total: len(rows)})
}
